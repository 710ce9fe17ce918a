"""How decisions weigh in retrieval: probabilities on both sides, label matching always counted."""

from __future__ import annotations

import pytest

from kg_rag.model import Agent, Candidate, Mention, Selection
from kg_rag.pipeline.retrieve import mention_reading, probabilities

SCORES = {"a": 0.5, "b": 0.3, "c": 0.2}


def test_scores_become_probabilities() -> None:
    assert probabilities(SCORES) == pytest.approx(SCORES)
    assert probabilities({"a": 2.0, "b": 2.0}) == {"a": 0.5, "b": 0.5}
    # readings without probability are left out; a decision without any positive score says nothing
    assert probabilities({"a": 0.7, "b": 0.0}) == {"a": 1.0}
    assert probabilities({"a": 0.0}) == {} and probabilities({}) == {}


def _mention(*concepts: str) -> Mention:
    return Mention(0, 4, "bank", "en", tuple(Candidate(c, f"{c}-sense") for c in concepts))


def test_a_mention_looks_for_every_candidate_by_label_and_for_its_readings_by_probability() -> None:
    m = _mention("a", "b", "c")
    sel = Selection(tuple((f"{c}-sense", p) for c, p in SCORES.items()), Candidate("a", "a-sense"), 0.9,
                    Agent("knowledge", "1"))
    r = mention_reading(m, sel, "urn:decision", label_matching=False)
    assert r.weights == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})
    # a confident decision keeps its probabilities: the other readings still count a little
    assert r.probabilities == pytest.approx(SCORES)
    # label matching: no probabilities at all
    assert mention_reading(m, sel, None, label_matching=True).probabilities == {}
    # nobody decided: label matching only, never nothing
    undecided = mention_reading(m, None, None, label_matching=False)
    assert undecided.probabilities == {} and sum(undecided.weights.values()) == pytest.approx(1.0)
    # an unambiguous mention means its one concept
    assert mention_reading(_mention("x"), None, None, label_matching=False).probabilities == {"x": 1.0}


def test_senses_of_one_concept_add_up() -> None:
    m = Mention(0, 4, "bank", "en", (Candidate("a", "s1"), Candidate("a", "s2"), Candidate("b", "s3")))
    sel = Selection((("s1", 0.25), ("s2", 0.25), ("s3", 0.5)), Candidate("b", "s3"), 0.4, Agent("knowledge", "1"))
    r = mention_reading(m, sel, None, label_matching=False)
    assert r.probabilities == pytest.approx({"a": 0.5, "b": 0.5})
    assert r.weights == pytest.approx({"a": 0.5, "b": 0.5})


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
