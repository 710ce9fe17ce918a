"""How a decision's readings weigh in retrieval (question side and document side)."""

from __future__ import annotations

import math

import pytest

from kg_rag.pipeline.ranking_config import CONFIDENT, DOC_SOFTNESS
from kg_rag.pipeline.retrieve import reading_weights

SCORES = {"a": 0.5, "b": 0.3, "c": 0.2}


def test_confident_decision_counts_only_its_choice() -> None:
    for document in (True, False):
        assert reading_weights(SCORES, "a", CONFIDENT, document) == {"a": 1.0}
        assert reading_weights(SCORES, "a", 0.9, document) == {"a": 1.0}


def test_unsure_question_spreads_one_unit_over_its_readings() -> None:
    w = reading_weights(SCORES, "a", 0.2, document=False)
    assert w == pytest.approx({"a": 0.5, "b": 0.3, "c": 0.2})
    assert sum(w.values()) == pytest.approx(1.0)
    # unnormalised scores are normalised
    assert reading_weights({"a": 2.0, "b": 2.0}, "a", 0.0, document=False) == {"a": 0.5, "b": 0.5}


def test_unsure_document_counts_readings_relative_to_its_choice() -> None:
    w = reading_weights(SCORES, "a", 0.2, document=True)
    assert w["a"] == 1.0
    assert w["b"] == pytest.approx((0.3 / 0.5) ** DOC_SOFTNESS)
    assert w["c"] == pytest.approx((0.2 / 0.5) ** DOC_SOFTNESS)
    assert w["a"] > w["b"] > w["c"] > 0


def test_readings_without_probability_and_unresolved_decisions_count_nothing() -> None:
    assert reading_weights({"a": 0.7, "b": 0.0}, "a", 0.1, document=True) == {"a": 1.0}
    assert reading_weights(SCORES, None, 0.1, document=True) == {}
    assert reading_weights({}, "a", 0.1, document=False) == {"a": 1.0}
    assert all(math.isfinite(v) for v in reading_weights(SCORES, "c", 0.0, document=True).values())


def test_focus_selects_the_mention_that_matches_the_span_best() -> None:
    from kg_rag.pipeline.retrieve import focus_mentions

    spans = [(4, 11), (4, 8), (12, 14)]          # "made up", nested "made", "of"
    assert focus_mentions(spans, (4, 11)) == {0}  # the phrase, not the word nested in it
    assert focus_mentions(spans, (4, 8)) == {1}   # the word selected inside the phrase
    assert focus_mentions(spans, (12, 14)) == {2}
    assert focus_mentions(spans, (0, 3)) == set()
    assert focus_mentions(spans, None) == set()
    assert focus_mentions([(0, 5), (0, 5)], (0, 5)) == {0, 1}   # equal fits: both


def test_a_focused_phrase_ranks_its_documents_before_those_of_a_nested_word() -> None:
    from kg_rag.api import KnowledgeGraph
    from kg_rag.documents import SourceDocument
    from kg_rag.resources import resource_path
    from kg_rag.store import EmbeddedStore

    demo = resource_path("demo")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    kg.index_documents([
        SourceDocument(id="orchard", text="A fruit tree grew behind the house.", lang="en"),
        SourceDocument(id="market", text="Fresh fruit is sold at the market every morning.", lang="en"),
    ])
    q = "Old fruit trees are pruned in winter."
    s = q.index("fruit trees")
    a = kg.ask(q, lang="en", focus=(s, s + len("fruit trees")))
    scores = {r.doc_id: r.score for r in a.results}
    assert a.results[0].doc_id == "orchard"
    # the market mentions only the nested word: context for the phrase, not its focus
    assert scores.get("market", 0.0) < scores["orchard"] / 10
