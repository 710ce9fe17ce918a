"""A long document is annotated, decided and written in sections (``kg_rag.pipeline.index``):
a document within one section is written as before, quad for quad; a long one ends whole and
retrievable; a section that fails leaves the store as it was; progress names a document only
once all of it is written. The section bound is made tiny here, so the demo's texts are long."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument
from kg_rag.namespaces import DECISIONS_GRAPH, XSD
from kg_rag.pipeline import index as index_module
from kg_rag.pipeline import parallel, postings
from kg_rag.pipeline.index import document_sections, index_documents, index_in_sections
from kg_rag.pipeline.shapes import validate
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore, Store, stamp
from kg_rag.store import embedded as embedded_module
from tests.unit.pipeline.test_postings import from_annotations, same, stored

DEMO = resource_path("demo")
SECTION = 400  # characters: the long document below has several sections


def _corpus() -> list[SourceDocument]:
    rows = [json.loads(x) for x in (DEMO / "documents" / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if x]
    return [SourceDocument(r["id"], r["text"], r.get("lang"), title=r.get("title", "")) for r in rows]


DOC_IRI = "https://w3id.org/kg-rag/id/doc/long"


def _long() -> SourceDocument:
    """The demo's English texts as the paragraphs of one document, one of them twice (a passage
    repeated in a later section)."""
    en = [d.text for d in _corpus() if d.lang == "en"]
    return SourceDocument("long", "\n\n".join(en[:12] + en[:1]), "en", title="a long one")


def _kg(path: Path | None = None) -> KnowledgeGraph:
    kg = KnowledgeGraph(EmbeddedStore(path or ":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def _quads(store: Store, mask_times: bool = True) -> set[str]:
    out = set()
    for q in store.oxigraph:  # type: ignore[attr-defined]
        if q.graph_name == stamp.GRAPH:   # a random token per store
            continue
        o = q.object
        if mask_times and isinstance(o, Literal) and o.datatype == XSD.dateTime:
            o = Literal("T", datatype=XSD.dateTime)
        out.add(str(Quad(q.subject, q.predicate, o, q.graph_name)))
    return out


def _listed(kg: KnowledgeGraph) -> set[str]:
    return {d["id"] for d in kg.documents()}


def test_sections_are_runs_of_whole_passages() -> None:
    doc = _long()
    sections = document_sections(doc, SECTION)
    assert len(sections) >= 4
    flat = [p for s in sections for p in s]
    assert flat == document_sections(doc, 10**9)[0]          # every passage once, in order
    for s in sections:
        assert len(s) == 1 or s[-1][1] - s[0][0] <= SECTION  # only a lone passage is longer
    assert len(document_sections(doc, len(doc.text))) == 1   # a document within the bound: one


def test_a_document_within_one_section_is_written_as_before() -> None:
    """The same quads, whether the bound is far above the document or just at its length — and
    the section writer given the one section writes what the one update writes."""
    big = _long()
    docs = [*_corpus(), big]
    whole = _kg()
    index_documents(whole.store, docs, whole.annotator, whole.selector("knowledge"),
                    section_chars=10**9)
    tight = _kg()
    index_documents(tight.store, docs, tight.annotator, tight.selector("knowledge"),
                    section_chars=len(big.text))
    assert _quads(whole.store) == _quads(tight.store)
    # the section writer with one section (what the whole path writes, by other code)
    one = _kg()
    one_sel = one.selector("knowledge")
    tally, contexts = index_in_sections(one.store, big, document_sections(big, 10**9),
                                        one.annotator, one_sel)
    alone = _kg()
    rep = index_documents(alone.store, [big], alone.annotator, alone.selector("knowledge"))
    assert _quads(one.store) == _quads(alone.store) and len(_quads(one.store)) > 100
    assert (tally.mentions, tally.decided, tally.passages) == (rep.mentions, rep.decided, rep.passages)
    assert rep.decided > 0 and contexts


def test_a_long_document_is_indexed_whole_and_retrievable() -> None:
    doc = _long()
    kg_sec, kg_whole = _kg(), _kg()
    details: list[tuple[str, int, int]] = []
    rep = index_documents(kg_sec.store, [doc], kg_sec.annotator, kg_sec.selector("knowledge"),
                          detail=lambda _i, stage, done, total: details.append((stage, done, total)),
                          section_chars=SECTION)
    whole = index_documents(kg_whole.store, [doc], kg_whole.annotator,
                            kg_whole.selector("knowledge"), section_chars=10**9)
    assert (rep.passages, rep.mentions, rep.ambiguous) == (whole.passages, whole.mentions, whole.ambiguous)
    # the repeated passage, in a later section, reused the decision of the first one
    assert rep.reused > 0 and rep.decided + rep.reused == whole.decided
    # everything but what a decision chose (one sense per discourse pools over a section)
    # and whether a decision was reused is as in the one update
    # and whether a decision was reused is as in the one update; the postings, a set per
    # section, sum to the same annotation counts per concept
    def plain(kg: KnowledgeGraph) -> set[str]:
        skip = ("oa#hasBody", "decisionReused", "#postingConcept", "#labelCount", "#agreementSum",
                "#meaningProbability")
        return {q for q in _quads(kg.store) if str(DECISIONS_GRAPH) not in q and not any(s in q for s in skip)}
    assert plain(kg_sec) == plain(kg_whole)

    def counts(kg: KnowledgeGraph) -> dict[str, int]:
        concepts = sorted({q.split()[2][1:-1] for q in _quads(kg.store) if "#candidateConcept" in q})
        return {c: p.labels for c, p in postings.read(kg.store, concepts).get(DOC_IRI, {}).items()}
    assert counts(kg_sec) == counts(kg_whole) and counts(kg_whole)
    # and what they sum is what the document's annotations and decisions say
    same(stored(kg_sec.store), from_annotations(kg_sec.store))
    assert _listed(kg_sec) == {"long"}
    record = kg_sec.document("long")
    assert record["text"] == doc.text and len(record["annotations"]) == rep.mentions
    conforms, report = validate(kg_sec.store)
    assert conforms, report
    answer = kg_sec.ask("Which trees lose their leaves in autumn?", lang="en")
    assert [r.doc_id for r in answer.results] == ["long"]
    # detail: characters annotated up to the end, mentions decided section by section
    annotate = [d for d in details if d[0] == "annotate"]
    assert [d[1] for d in annotate] == sorted(d[1] for d in annotate) and annotate[-1][1:] == (len(doc.text), len(doc.text))
    decide = [d for d in details if d[0] == "decide"]
    assert 3 <= len(decide) <= len(document_sections(doc, SECTION)) + 1
    assert decide[0][1] == 0 and all(d < t for _, d, t in decide[:-1])
    assert all(a[2] == b[1] for a, b in itertools.pairwise(decide))   # each section after the last
    assert decide[-1][1:] == (rep.ambiguous, rep.ambiguous)


def test_progress_names_a_long_document_once_it_is_complete() -> None:
    kg = _kg()
    docs = [*_corpus()[:3], _long(), *_corpus()[3:5]]
    seen: list[set[str]] = []
    during: list[set[str]] = []

    def progress(_n: int) -> None:
        seen.append(_listed(kg))

    def detail(doc_id: str, stage: str, done: int, total: int) -> None:
        if doc_id == "long" and stage == "decide" and done < total:
            during.append(_listed(kg))

    rep = index_documents(kg.store, docs, kg.annotator, kg.selector("knowledge"), progress,
                          detail, section_chars=SECTION)
    assert rep.documents == len(seen) == len(docs)
    # the three before were written before the long one began; it is not listed while written
    assert during and all(s == {d.id for d in docs[:3]} for s in during)
    assert "long" in seen[3] and len(seen[3]) == 4
    assert _listed(kg) == {d.id for d in docs}


@pytest.mark.parametrize("where", ["decide", "write", "write-text"])
@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_failed_later_section_leaves_no_trace(where: str, error: type[BaseException],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A section is written in two updates, its decisions then its text: the third update (the
    second section's decisions) or the fourth (its text, after its decisions were written)
    failing leaves the store as it was, as the third section's decide failing does."""
    fail_at = 4 if where == "write-text" else 3
    kg = _kg()
    kg.index_documents(_corpus()[:4])              # documents and decisions from before
    before = _quads(kg.store, mask_times=False)
    doc = _long()
    calls = {"n": 0}
    if where == "decide":
        real = index_module.decide

        def failing(*args, **kw):  # type: ignore[no-untyped-def]
            calls["n"] += 1
            if calls["n"] == 3:
                raise error("boom")
            return real(*args, **kw)

        monkeypatch.setattr(index_module, "decide", failing)
    else:
        real_apply = kg.store.apply

        def failing_apply(change):  # type: ignore[no-untyped-def]
            if change.insert:
                calls["n"] += 1
                if calls["n"] == fail_at:
                    raise error("boom")
            return real_apply(change)

        monkeypatch.setattr(kg.store, "apply", failing_apply)
    with pytest.raises(error, match="boom"):
        index_documents(kg.store, [doc], kg.annotator, kg.selector("knowledge"),
                        section_chars=SECTION)
    assert calls["n"] == fail_at
    assert _quads(kg.store, mask_times=False) == before
    monkeypatch.undo()
    # indexed again, cleanly: as into a store that never saw the failure
    index_documents(kg.store, [doc], kg.annotator, kg.selector("knowledge"), section_chars=SECTION)
    fresh = _kg()
    fresh.index_documents(_corpus()[:4])
    index_documents(fresh.store, [doc], fresh.annotator, fresh.selector("knowledge"), section_chars=SECTION)
    assert _quads(kg.store) == _quads(fresh.store)


def test_a_long_document_indexed_again_replaces_the_old_one() -> None:
    kg = _kg()
    doc = _long()
    index_documents(kg.store, [doc], kg.annotator, kg.selector("knowledge"), section_chars=SECTION)
    once = _quads(kg.store)
    rep = index_documents(kg.store, [doc], kg.annotator, kg.selector("knowledge"), section_chars=SECTION)
    assert rep.decided == 0 and rep.reused == rep.ambiguous   # every decision found again
    again = {q for q in _quads(kg.store) if "decisionReused" not in q}
    assert again == {q for q in once if "decisionReused" not in q}
    shorter = SourceDocument("long", doc.text[: doc.text.index("\n\n")], "en")
    index_documents(kg.store, [shorter], kg.annotator, kg.selector("knowledge"), section_chars=SECTION)
    assert kg.document("long")["text"] == shorter.text
    assert not any("long#p1>" in q for q in _quads(kg.store))   # the old passages are gone


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_workers_index_a_long_document_in_the_parent(where: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``--workers``: the long document is indexed in sections by the writing process, in its
    turn; the store ends as the serial run's."""
    monkeypatch.setattr(index_module, "SECTION_CHARS", SECTION)
    monkeypatch.setattr(parallel, "PER_WORKER", 2)
    docs = [*_corpus()[:5], _long(), *_corpus()[5:9]]
    serial = _kg()
    want = serial.index_documents(docs)
    kg = _kg(tmp_path / "store" if where == "disk" else None)
    got = kg.index_documents(docs, workers=2)
    assert _quads(kg.store) == _quads(serial.store)
    assert (got.documents, got.mentions, got.decided, got.reused) == (
        want.documents, want.mentions, want.decided, want.reused)
    kg.close()


def test_the_embedded_store_drops_a_large_graph_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_module, "PART", 10)
    store = EmbeddedStore(":memory:")
    g, other = NamedNode("http://example.org/g"), NamedNode("http://example.org/other")
    p = NamedNode("http://example.org/p")
    store.oxigraph.extend([Quad(NamedNode(f"http://example.org/s{i}"), p, Literal(str(i)), g) for i in range(35)])
    store.oxigraph.extend([Quad(NamedNode("http://example.org/s"), p, Literal("kept"), other)])
    writes = store.writes
    store.drop_graph(g)
    assert g not in store.named_graphs() and len(store.oxigraph) == 1 and store.writes > writes
    store.drop_graph(g)                          # a missing graph: nothing to do
    assert len(store.oxigraph) == 1
