"""Several schemes at once (tests/data/schemes/, two small thesauri): concepts of different
schemes linked by skos:exactMatch/closeMatch are one reading, not an ambiguity; every candidate
says its scheme and source; ``scheme=`` / ``--scheme`` keep one scheme in annotation and
retrieval; an unknown scheme is a one-line error."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.model import MentionReport
from kg_rag.store import open_store
from tests.support.paths import DATA

HERE = DATA / "schemes"
A = "https://example.org/econ-a/"
B = "https://example.org/econ-b/"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("schemes") / "store"
    _build(path)
    yield path


def _build(path: Path) -> None:
    with KnowledgeGraph(open_store(path=str(path))) as kg:  # released on return (one opener)
        kg.load([HERE / "econ-a.ttl", HERE / "econ-b.ttl", HERE / "glossary.ttl"])
        kg.index([HERE / "docs.jsonl"])


@pytest.fixture()
def kg(store: Path) -> Iterator[KnowledgeGraph]:
    k = KnowledgeGraph(open_store(path=str(store)))
    try:
        yield k
    finally:
        k.close()
        del k
        gc.collect()


def one(reports: list[MentionReport], text: str) -> MentionReport:
    found = [r for r in reports if r.mention.text.lower() == text]
    assert len(found) == 1, [r.mention.text for r in reports]
    return found[0]


def test_an_exact_match_across_schemes_is_one_reading_not_an_ambiguity(kg: KnowledgeGraph) -> None:
    r = one(kg.annotate("Inflation is rising", lang="en", record_question=False), "inflation")
    m = r.mention
    assert set(m.concepts) == {A + "inflation", B + "inflation"}
    assert m.same_meaning == ((A + "inflation", B + "inflation"),)
    assert not m.ambiguous and m.readings == 1
    assert r.selection is None and r.decision is None  # nothing to select


def test_a_close_match_stated_the_other_way_groups_too(kg: KnowledgeGraph) -> None:
    m = one(kg.annotate("deflation", lang="en", record_question=False), "deflation").mention
    assert len(m.concepts) == 2 and not m.ambiguous


def test_unlinked_concepts_of_two_schemes_stay_ambiguous(kg: KnowledgeGraph) -> None:
    r = one(kg.annotate("the bank", lang="en", record_question=False), "bank")
    assert r.mention.ambiguous and r.mention.same_meaning == ()
    assert r.selection is not None and len(r.selection.scores) == 2


def test_every_candidate_says_its_scheme_and_source(kg: KnowledgeGraph) -> None:
    m = one(kg.annotate("the bank", lang="en", record_question=False), "bank").mention
    got = {(c.concept, c.scheme, c.scheme_name) for c in m.candidates}
    assert got == {(A + "bank", A + "scheme", "econ-a"), (B + "bank", B + "scheme", "econ-b")}
    assert {c.source for c in m.candidates} == {"https://w3id.org/kg-rag/id/source/econ-a",
                                                "https://w3id.org/kg-rag/id/source/econ-b"}


def test_a_dictionary_sense_is_of_its_concept_s_scheme_and_a_sense_only_one_of_its_dictionary(
        kg: KnowledgeGraph) -> None:
    m = one(kg.annotate("lender", lang="en", record_question=False), "lender").mention
    by_sense = {c.sense.rsplit("/", 1)[-1]: c for c in m.candidates if c.sense}
    linked, alone = by_sense["lender-1"], by_sense["lender-2"]
    assert (linked.scheme, linked.scheme_name) == (A + "scheme", "econ-a")
    assert linked.source == alone.source == alone.scheme == "https://w3id.org/kg-rag/id/source/glossary"
    assert alone.scheme_name == "glossary"
    # the dictionary's name keeps its senses; scheme A's keeps the sense that reads as its bank
    kept = one(kg.annotate("lender", lang="en", record_question=False, scheme="glossary"), "lender")
    assert len(kept.mention.candidates) == 2
    kept = one(kg.annotate("lender", lang="en", record_question=False, scheme=A + "scheme"), "lender")
    assert [c.sense for c in kept.mention.candidates] == [linked.sense]


def test_the_annotation_of_one_meaning_points_at_all_its_concepts(kg: KnowledgeGraph) -> None:
    kg.annotate("Inflation again", lang="en", wsd="knowledge")
    body, _ = kg.raw_query("SELECT ?c WHERE { GRAPH ?g { ?a oa:hasTarget/oa:hasSelector/oa:exact "
                           "\"Inflation\" ; oa:hasBody ?c } }", "json")
    got = {b["c"]["value"] for b in json.loads(body)["results"]["bindings"]}
    assert got == {A + "inflation", B + "inflation"}


@pytest.mark.parametrize("scheme, want", [
    ("econ-a", A), ("econ-b.ttl", B), (B + "scheme", B), ("<https://w3id.org/kg-rag/id/source/econ-a>", A)])
def test_scheme_keeps_the_candidates_of_one_scheme(kg: KnowledgeGraph, scheme: str, want: str) -> None:
    reports = kg.annotate("inflation and the bank", lang="en", record_question=False, scheme=scheme)
    concepts = {c for r in reports for c in r.mention.concepts}
    assert concepts == {want + "inflation", want + "bank"}
    assert not any(r.mention.ambiguous for r in reports)


def test_scheme_drops_mentions_the_scheme_does_not_label(kg: KnowledgeGraph) -> None:
    reports = kg.annotate("the river and the prices", lang="en", record_question=False, scheme="econ-a")
    assert [r.mention.text for r in reports] == ["prices"]


def test_an_unknown_scheme_is_a_one_line_error(kg: KnowledgeGraph) -> None:
    for bad in ("nope", "https://example.org/no-such-scheme", "  ", A + "inflation"):
        with pytest.raises(InputError, match="scheme") as e:
            kg.annotate("inflation", lang="en", scheme=bad)
        assert "\n" not in str(e.value)


def test_retrieval_follows_one_meaning_and_scheme_keeps_it_in_its_scheme(kg: KnowledgeGraph) -> None:
    # a:inflation skos:related a:prices: the document on prices comes through scheme A only
    every = kg.ask("inflation", lang="en", record_question=False)
    assert "prices" in [r.doc_id for r in every.results]
    only_b = kg.ask("inflation", lang="en", record_question=False, scheme="econ-b")
    assert "prices" not in [r.doc_id for r in only_b.results]
    only_a = kg.ask("inflation", lang="en", record_question=False, scheme="econ-a")
    assert "prices" in [r.doc_id for r in only_a.results]


def test_an_accepted_alignment_link_counts_as_the_same_meaning(tmp_path: Path) -> None:
    with KnowledgeGraph(open_store(path=str(tmp_path / "s"))) as kg:
        kg.load([HERE / "econ-a.ttl", HERE / "econ-b.ttl"])
        assert one(kg.annotate("bank", lang="en", record_question=False), "bank").mention.ambiguous
        kg.update(f"INSERT DATA {{ GRAPH <https://w3id.org/kg-rag/id/graph/alignments> "
                  f"{{ <{B}bank> <http://www.w3.org/2004/02/skos/core#closeMatch> <{A}bank> }} }}")
        assert not one(kg.annotate("bank", lang="en", record_question=False), "bank").mention.ambiguous


def test_one_scheme_alone_groups_nothing(tmp_path: Path) -> None:
    with KnowledgeGraph(open_store(path=str(tmp_path / "s"))) as kg:
        kg.load([HERE / "econ-b.ttl"])
        m = one(kg.annotate("inflation", lang="en", record_question=False), "inflation").mention
        assert m.same_meaning == () and m.concepts == (B + "inflation",)


def run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_shows_the_schemes_and_filters(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, store, "annotate", "--lang", "en", "--wsd", "knowledge", "Inflation and the bank")
    assert code == 0, err
    assert "→ inflation (econ-a) = inflation (econ-b)" in out
    assert "bank (econ-a)" in out and "bank (econ-b)" in out and "ambiguous, 2 senses" in out
    code, out, err = run(capsys, store, "annotate", "--lang", "en", "--json", "--scheme", "econ-b", "Inflation")
    assert code == 0, err
    (m,) = json.loads(out)["mentions"]
    assert [(c["concept"], c["scheme"], c["scheme_name"]) for c in m["candidates"]] == [
        (B + "inflation", B + "scheme", "econ-b")]
    code, out, err = run(capsys, store, "ask", "--lang", "en", "--scheme", "econ-b", "inflation")
    assert code == 0, err
    code, out, err = run(capsys, store, "ask", "--scheme", "nope", "inflation")
    assert code == 2 and "no concept scheme or loaded source 'nope'" in err and err.count("\n") == 1


def test_origins_are_loaded_sources_only() -> None:
    """A graph that types a concept but is no loaded source (here one written by a user's update)
    is no origin: the query leaves the catalog to the caller, which keeps the sources."""
    from pyoxigraph import NamedNode, Quad

    from kg_rag.annotate.schemes import Schemes
    from kg_rag.namespaces import RDF, SKOS
    from kg_rag.store import Change, EmbeddedStore

    store = EmbeddedStore(":memory:")
    kg = KnowledgeGraph(store)
    kg.load([HERE / "econ-a.ttl", HERE / "econ-b.ttl"])
    stray = NamedNode("urn:kgr-test:not-a-source")
    store.apply(Change(insert=[
        Quad(NamedNode(A + "bank"), RDF.type, SKOS.Concept, stray),
        Quad(NamedNode(A + "bank"), SKOS.inScheme, NamedNode("urn:kgr-test:stray-scheme"), stray),
        Quad(NamedNode("urn:kgr-test:only-stray"), RDF.type, SKOS.Concept, stray)]))
    got = Schemes(store).origins([A + "bank", B + "bank", "urn:kgr-test:only-stray"])
    assert got[A + "bank"] is not None and got[A + "bank"].scheme == A + "scheme"
    assert got[A + "bank"].source == "https://w3id.org/kg-rag/id/source/econ-a"
    assert got[B + "bank"] is not None and got[B + "bank"].source.endswith("/econ-b")
    assert got["urn:kgr-test:only-stray"] is None
