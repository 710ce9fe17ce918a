"""Ranking postings (kg_rag.pipeline.postings): what indexing writes per (document, concept) is
what the document's annotations and decisions say, as the store holds them; ``redecide``
rewrites them with the annotations; a store indexed before postings gets them derived once (the
same answers), and a read-only one says so instead of leaving its documents out."""

from __future__ import annotations

import gc
from collections import defaultdict
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import StoreError
from kg_rag.namespaces import KGR
from kg_rag.pipeline import postings
from kg_rag.pipeline.postings import decision_probabilities
from kg_rag.store import Change, EmbeddedStore, Values

QUESTIONS = [("הגבר קרא בקול עם הזריחה", "he"), ("הפירות העמיסו על הבדים", "he"),
             ("Der Hahn tropft", "de"), ("river bank", "en"), ("Bank", None)]


def stored(store: EmbeddedStore) -> dict[tuple[str, str], tuple[int, float, float]]:
    """(document, concept) → (labels, agreement, meaning) as the postings hold them."""
    out: dict[tuple[str, str], postings.Posting] = {}
    rows = store.oxigraph.query("""
        PREFIX kgr: <https://w3id.org/kg-rag/ns#>
        SELECT ?doc ?concept ?labels ?agreement ?meaning WHERE { GRAPH ?doc {
          ?p kgr:postingConcept ?concept ; kgr:labelCount ?labels ;
             kgr:agreementSum ?agreement ; kgr:meaningProbability ?meaning } }""")
    for r in rows:
        key = (r["doc"].value, r["concept"].value)
        p = out.setdefault(key, postings.Posting())
        p.merge(int(r["labels"].value), float(r["agreement"].value), float(r["meaning"].value))
    return {k: (p.labels, p.agreement, p.meaning) for k, p in out.items()}


def from_annotations(store: EmbeddedStore) -> dict[tuple[str, str], tuple[int, float, float]]:
    """The same numbers computed afresh from every annotation, its candidates and its decision."""
    docs = [r["doc"] for r in store.oxigraph.query(
        "PREFIX kgr: <https://w3id.org/kg-rag/ns#> SELECT ?doc WHERE { GRAPH ?doc { ?doc a kgr:Document } }")]
    rows = store.select("select-document-readings", values=Values.column("doc", docs))
    probs = decision_probabilities(store, {r["dec"].value for r in rows if "dec" in r})
    cands: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        cands[r["ann"].value].add(r["concept"].value)
    out: dict[tuple[str, str], postings.Posting] = {}
    seen = set()
    for r in rows:
        d, c, a = r["doc"].value, r["concept"].value, r["ann"].value
        if (a, c) in seen:
            continue
        seen.add((a, c))
        p = out.setdefault((d, c), postings.Posting())
        if "dec" in r:
            p.add(probs.get(r["dec"].value, {}).get(c, 0.0), None)
        else:
            p.add(1.0, len(cands[a]))
    return {k: (p.labels, p.agreement, p.meaning) for k, p in out.items()}


def same(a: dict[tuple[str, str], tuple[int, float, float]],
         b: dict[tuple[str, str], tuple[int, float, float]]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k][0] == b[k][0], k
        assert a[k][1] == pytest.approx(b[k][1], abs=1e-9), k
        assert a[k][2] == pytest.approx(b[k][2], abs=1e-9), k


def answers(kg: KnowledgeGraph) -> list[list[tuple[str, float, float]]]:
    return [[(r.doc_id, r.score, r.relevance) for r in kg.ask(q, lang=lang, k=10).results]
            for q, lang in QUESTIONS]


def copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_indexing_writes_what_the_annotations_and_decisions_say(demo: Path, tmp_path: Path) -> None:
    store = EmbeddedStore(str(copy(demo, tmp_path / "s")))
    got = stored(store)
    assert len(got) > 100 and any(labels > 1 for labels, _, _ in got.values())
    assert any(0 < agreement < labels for labels, agreement, _ in got.values())  # decided readings
    same(got, from_annotations(store))
    store.close()


def test_redecide_rewrites_the_postings_with_the_annotations(demo: Path, tmp_path: Path) -> None:
    kg = KnowledgeGraph.open(path=str(copy(demo, tmp_path / "s")))
    before = stored(kg.store)
    report = kg.redecide("first-sense")
    assert report.redecided, "first-sense changes some of the knowledge selector's decisions"
    after = stored(kg.store)
    assert after != before
    same(after, from_annotations(kg.store))
    kg.close()


def test_a_store_indexed_before_postings_gets_them_derived_with_the_same_answers(
        demo: Path, tmp_path: Path) -> None:
    kg = KnowledgeGraph.open(path=str(copy(demo, tmp_path / "with")))
    want, want_postings = answers(kg), stored(kg.store)
    kg.close()
    old = copy(demo, tmp_path / "without")
    store = EmbeddedStore(str(old))
    strip = [q for q in store.oxigraph.quads_for_pattern(None, None, None)
             if q.predicate in (KGR.postingConcept, KGR.labelCount, KGR.agreementSum,
                                KGR.meaningProbability, KGR.postingsVersion)]
    assert strip
    store.apply(Change(delete=[Quad(q.subject, q.predicate, q.object, q.graph_name) for q in strip]))
    assert not stored(store)
    store.close()
    del store
    gc.collect()   # the engine lets go of its lock when the store object goes
    # read-only: an error that says what to do, never documents silently left out
    ro = EmbeddedStore(str(old), read_only=True)
    with pytest.raises(StoreError, match="indexed before kg-rag kept postings"):
        postings.ensure(ro)
    ro.close()
    del ro
    gc.collect()
    kg = KnowledgeGraph.open(path=str(old))
    assert answers(kg) == want
    same(stored(kg.store), want_postings)
    kg.close()


def test_a_document_written_in_parts_sums_its_posting_nodes() -> None:
    doc = NamedNode("https://w3id.org/kg-rag/id/doc/parts")
    c = "https://example.org/c"
    x = "https://example.org/x"
    whole = postings.from_readings(doc, [("a1", [c], {c: 0.5}), ("a2", [c, x], None),
                                         ("a3", [c], {c: 0.25})])
    parts = (postings.from_readings(doc, [("a1", [c], {c: 0.5})])
             + postings.from_readings(doc, [("a2", [c, x], None), ("a3", [c], {c: 0.25})]))
    store = EmbeddedStore(":memory:")
    store.apply(Change(insert=[Quad(doc, KGR.term("x"), doc, doc)] + parts))
    got = postings.read(store, [c])[doc.value][c]
    nodes: dict[str, dict[str, str]] = defaultdict(dict)
    for q in whole:
        nodes[q.subject.value][q.predicate.value] = q.object.value
    one = next(n for n in nodes.values() if n.get(KGR.postingConcept.value) == c)
    assert got.labels == int(one[KGR.labelCount.value]) == 3
    assert got.agreement == pytest.approx(float(one[KGR.agreementSum.value])) == pytest.approx(1.0 + 0.75)
    assert got.meaning == pytest.approx(float(one[KGR.meaningProbability.value]))
    assert got.meaning == pytest.approx(1 - 0.5 * 0.5 * 0.75)


def test_indexing_records_that_every_document_has_postings_and_asking_writes_nothing(demo: Path, tmp_path: Path) -> None:
    kg = KnowledgeGraph.open(path=str(copy(demo, tmp_path / "s")))
    assert kg.store.ask("ask-postings-complete", bind={"v": postings._version()})
    kg.store.apply(Change(delete=[Quad(postings.MARKER, KGR.postingsVersion,
                                       postings._version(), postings.MARKER)]))
    before = kg.store.writes
    kg.ask("river bank", lang="en", record_question=False)
    assert kg.store.writes == before   # the check finds every document in order: no write
    assert not kg.store.ask("ask-postings-complete", bind={"v": postings._version()})
    kg.close()
