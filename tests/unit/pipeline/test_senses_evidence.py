"""fetch_evidence: sense and concept evidence (from the evidence index on an embedded store:
tests/unit/pipeline/test_evidence_index.py; per call in two batched queries, cached)."""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.derived import Derived
from kg_rag.model import Candidate, LangText
from kg_rag.pipeline.evidence import EVIDENCE, SENSE_EVIDENCE, fetch_evidence, queried_evidence
from kg_rag.store import Change, EmbeddedStore
from tests.support.senses_fixture import (
    HE,
    ILI,
    add_branch_sense_texts,
    bank_candidates,
    bd_candidates,
    load_fixture,
    remove_bank_definition,
)


def test_evidence_per_candidate_in_order(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    evs = fetch_evidence(store, bank_candidates())
    assert [e.candidate for e in evs] == list(bank_candidates())
    river = evs[1]
    assert river.definitions == (LangText("sloping land beside a body of water such as a river", "en"),)
    assert river.examples == (LangText("they pulled the canoe up on the bank", "en"),)
    assert LangText("bank", "en") in river.labels
    # graph neighbours are no evidence (the knowledge selector reads them from its knowledge
    # base, the LLM prompt names the broader concepts)
    assert not hasattr(river, "neighbours")


def test_hebrew_sense_gets_english_glosses_and_labels(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    fabric, branch = fetch_evidence(store, bd_candidates())
    assert branch.definitions[0].lang == "en" and "stem" in branch.definitions[0].text
    assert {LangText("branch", "en"), LangText("בד", "he")} <= set(branch.labels)
    assert LangText("fabric", "en") in fabric.labels


def test_sense_level_evidence_and_translations(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    add_branch_sense_texts(store)
    _, branch = fetch_evidence(store, bd_candidates())
    assert branch.definitions[0] == LangText("ענף של עץ", "he")
    assert LangText("literary", "en") in branch.usage
    assert LangText("branch", "en") in branch.translations


def test_concept_evidence_is_cached(mem_store: EmbeddedStore) -> None:
    """The per-call path (a remote store, a large store before its index is built)."""
    store = load_fixture(mem_store)
    Derived.of(store).invalidate()
    queried_evidence(store, bank_candidates())
    assert Derived.of(store).table(EVIDENCE).get(ILI + "i1") is not None
    # a cached concept is not queried again: remove its definition and it is still served
    remove_bank_definition(store)
    assert queried_evidence(store, bank_candidates())[0].definitions
    Derived.of(store).invalidate()
    assert not queried_evidence(store, bank_candidates())[0].definitions


def test_candidate_without_sense_or_store_data(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    [ev] = fetch_evidence(store, [Candidate("http://example.org/none")])
    assert ev.definitions == () and ev.labels == () and ev.broader == ()
    assert fetch_evidence(store, []) == ()


def test_sense_evidence_is_cached(mem_store: EmbeddedStore) -> None:
    """Sense-level evidence is asked once per sense (an empty answer too), until the
    vocabularies change (the registry is invalidated) — on the per-call path."""
    store = load_fixture(mem_store)
    Derived.of(store).invalidate()
    assert not queried_evidence(store, bd_candidates())[1].usage
    g = NamedNode("https://w3id.org/kg-rag/id/source/fix-he")
    store.apply(Change(insert=[Quad(NamedNode(HE + "bd-n-2"),
                                    NamedNode("http://www.lexinfo.net/ontology/3.0/lexinfo#usageNote"),
                                    Literal("literary", language="en"), g)]))
    assert Derived.of(store).table(SENSE_EVIDENCE).get(HE + "bd-n-2") is not None
    assert not queried_evidence(store, bd_candidates())[1].usage  # served from the table
    Derived.of(store).invalidate()
    assert LangText("literary", "en") in queried_evidence(store, bd_candidates())[1].usage
