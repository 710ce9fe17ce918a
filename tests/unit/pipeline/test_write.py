"""One write path for a text (pipeline/write.py): ask and index record a text's annotations
alike; the stage records (Unit, Decided, Outcome) are frozen."""

from __future__ import annotations

import dataclasses

import pytest
from pyoxigraph import NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument
from kg_rag.namespaces import ID, KGR, PROV, RDF
from kg_rag.pipeline.decide import Decided, Outcome, Unit, decide
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
PAPER = "הפירות העמיסו על הבדים"


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    g.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return g


def _annotations(kg: KnowledgeGraph, owner: str) -> set[tuple[str, str, str]]:
    """The annotation triples of ``owner``'s graph, with the owner-specific IRIs (annotation
    nodes hash their owner) replaced by the annotated span; passage links left out."""
    store = kg.store
    assert isinstance(store, EmbeddedStore)
    quads = list(store.oxigraph.quads_for_pattern(None, None, None, NamedNode(owner)))
    ends = {k: {q.subject.value.removesuffix("#pos"): q.object.value for q in quads
                if q.predicate == NamedNode("http://www.w3.org/ns/oa#" + k)} for k in ("start", "end")}
    span = {a: f"({s}-{ends['end'][a]})" for a, s in ends["start"].items()}
    assert span, "no annotation was written"

    def name(term: object) -> str:
        v = getattr(term, "value", str(term))
        if v == owner:
            return "OWNER"
        for a, s in span.items():
            if v == a or v.startswith(a + "#"):
                return "ANN" + s + v[len(a):]
        return v

    return {(name(q.subject), q.predicate.value, name(q.object)) for q in quads
            if q.subject.value.startswith(ID + "ann/") and q.predicate != KGR.passage}


def test_ask_and_index_write_the_same_annotations_for_the_same_text(kg: KnowledgeGraph) -> None:
    kg.index_documents([SourceDocument("same-text", PAPER, "he")])
    answer = kg.ask(PAPER, lang="he")
    doc = ID + "doc/same-text"
    by_doc = _annotations(kg, doc)
    by_question = _annotations(kg, answer.question_iri)
    reused = KGR.decisionReused.value
    # the question reuses the decisions the document made (same selector, mention and context)
    assert {t for t in by_question if t[1] == reused} and not {t for t in by_doc if t[1] == reused}
    assert {t for t in by_doc if t[1] != reused} == {t for t in by_question if t[1] != reused}
    assert any(t[1] == KGR.decision.value for t in by_doc)
    # a document's annotations sit in passages, a question's do not
    store = kg.store
    assert isinstance(store, EmbeddedStore)
    assert list(store.oxigraph.quads_for_pattern(None, KGR.passage, None, NamedNode(doc)))
    assert not list(store.oxigraph.quads_for_pattern(None, KGR.passage, None,
                                                     NamedNode(answer.question_iri)))


def test_stage_records_are_frozen(kg: KnowledgeGraph) -> None:
    mentions = tuple(kg.annotator.annotate(PAPER, "he"))
    unit = Unit(0, len(PAPER), "he", PAPER, mentions)
    outcome = decide(kg.store, [unit], kg.selector("knowledge"))
    assert isinstance(outcome.decided, tuple) and isinstance(outcome.decision_quads, tuple)
    assert all(isinstance(q, Quad) for q in outcome.decision_quads)
    ambiguous = [d for d in outcome.decided if d.mention.ambiguous]
    assert ambiguous and all(d.decision is not None and d.selection is not None for d in ambiguous)
    assert unit.mentions == mentions  # decide built new records, it changed none of its inputs
    record: Unit | Decided | Outcome
    for record, field in ((unit, "mentions"), (outcome.decided[0], "selection"), (outcome, "llm_calls")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)
    # the same text decided again gives equal records, the decisions now read from the store
    again = decide(kg.store, [unit], kg.selector("knowledge"))
    assert [d.decision for d in again.decided] == [d.decision for d in outcome.decided]


def test_a_batch_describes_its_selector_once(kg: KnowledgeGraph) -> None:
    text = "הגבר קרא בקול עם הזריחה, והפירות העמיסו על הבדים של העץ הגבוה בגן."
    unit = Unit(0, len(text), "he", text, tuple(kg.annotator.annotate(text, "he")))
    outcome = decide(kg.store, [unit], kg.selector("knowledge"))
    new = [d for d in outcome.decided if d.mention.ambiguous and not d.reused]
    assert len(new) >= 2, [d.mention.text for d in outcome.decided]
    assert len(outcome.decision_quads) == len(set(outcome.decision_quads))
    described = [q for q in outcome.decision_quads
                 if q.predicate == RDF.type and q.object == PROV.SoftwareAgent]
    assert len(described) == len({d.selection.agent for d in new if d.selection is not None}) == 1
    # and every decision names it
    agent = described[0].subject
    assert all(any(q.subject == d.decision and q.predicate == PROV.wasAssociatedWith and q.object == agent
                   for q in outcome.decision_quads) for d in new)
