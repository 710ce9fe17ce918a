"""A result's relevance in [0, 1] (kg_rag.pipeline.relevance): the formula on hand-made
evidence, its bounds on every demo answer, that it does not move when other documents are
added (the ranking score does), the minimum-relevance cut with its reason, and that the
explanation replays it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.documents import SourceDocument
from kg_rag.errors import InputError
from kg_rag.pipeline.postings import ConceptPostings, Gathered, Posting
from kg_rag.pipeline.relevance import check_min_relevance, document_meanings, expansions, relevance
from kg_rag.pipeline.retrieve import QueryConcept, QuestionReading, Scores
from kg_rag.serialize import answer_dict
from kg_rag.store import EmbeddedStore

BRANCHES = ("הפירות העמיסו על הבדים", "הבדים")   # fruit weighs down the branches (focus: הבדים)


def _postings(readings: dict[str, dict[str, float]],
              undecided: dict[str, int] | None = None) -> dict[str, Posting]:
    """concept → annotation → probability (``undecided``: annotation → its candidate concepts,
    for the annotations without a decision) as a document's postings."""
    out = {}
    for c, anns in readings.items():
        p = out[c] = Posting()
        for ann, v in anns.items():
            p.add(v, (undecided or {}).get(ann))
    return out


def _scores(doc: str, readings: dict[str, dict[str, float]],
            undecided: dict[str, int] | None = None) -> Scores:
    """The ranking's working with ``doc`` the one document, these its postings."""
    found = {c: ConceptPostings(np.array([0]), np.array([p.labels]), np.array([p.agreement]),
                                np.array([p.miss]))
             for c, p in _postings(readings, undecided).items()}
    return Scores({}, Gathered([doc], found), [], np.zeros(1))


def test_a_concept_meant_somewhere_in_the_document_combines_its_annotations() -> None:
    # two annotations meaning c with 0.5 and 0.5: 1 - 0.5 × 0.5
    assert document_meanings(_postings({"c": {"a1": 0.5, "a2": 0.5}})) == {"c": pytest.approx(0.75)}
    # an undecided annotation with two candidate concepts: 1/2 each
    assert document_meanings(_postings({"c": {"a1": 1.0}, "d": {"a1": 1.0}}, {"a1": 2})) == {
        "c": pytest.approx(0.5), "d": pytest.approx(0.5)}


def test_coverage_is_the_question_probability_times_the_document_meaning() -> None:
    m = QuestionReading(0, 4, {"rooster": 0.5, "tap": 0.5}, {"rooster": 0.8, "tap": 0.2})
    s = _scores("d", {"rooster": {"a": 0.9}, "tap": {"a": 0.1}})
    r = relevance([m], set(), {}, s, "d", 100.0)
    assert r.value == pytest.approx(0.8 * 0.9 + 0.2 * 0.1)
    # no decision on the question's side (label matching): its readings count equally
    bare = QuestionReading(0, 4, {"rooster": 0.5, "tap": 0.5}, {})
    assert relevance([bare], set(), {}, s, "d", 100.0).value == pytest.approx(0.5)


def test_a_neighbour_counts_at_its_expansion_weight_and_the_focus_at_the_boost() -> None:
    tree = QueryConcept("tree", 1.0, 1.0, mention=0)
    plant = QueryConcept("plant", 0.5, 0.5, mention=0, source=tree, relation="broader",
                         expansion_weight=0.5)
    fruit = QueryConcept("fruit", 1.0, 1.0, mention=1)
    mentions = [QuestionReading(0, 4, {"tree": 1.0}, {"tree": 1.0}),
                QuestionReading(5, 9, {"fruit": 1.0}, {"fruit": 1.0})]
    s = _scores("d", {"plant": {"a": 1.0}})          # the document names only the broader concept
    r = relevance(mentions, set(), expansions([tree, plant, fruit]), s, "d", 100.0)
    assert r.coverage == (0.5, 0.0) and r.value == pytest.approx(0.25)
    focused = relevance(mentions, {0}, expansions([tree, plant, fruit]), s, "d", 100.0)
    assert focused.weights == (100.0, 1.0)
    assert focused.value == pytest.approx(100 * 0.5 / 101)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcd"), st.floats(0, 1), min_size=1), min_size=1, max_size=4),
       st.dictionaries(st.sampled_from("abcd"),
                       st.dictionaries(st.sampled_from(["x", "y", "z"]), st.floats(0, 1), min_size=1)),
       st.sets(st.integers(0, 3)), st.floats(0, 1000))
def test_relevance_is_always_between_0_and_1(dists: list[dict[str, float]],
                                             meant: dict[str, dict[str, float]],
                                             focused: set[int], boost: float) -> None:
    readings = [QuestionReading(i, i + 1, {c: 1 / len(d) for c in d}, d) for i, d in enumerate(dists)]
    r = relevance(readings, focused, {}, _scores("d", meant), "d", boost)
    assert 0.0 <= r.value <= 1.0 and all(0.0 <= c <= 1.0 for c in r.coverage)
    assert not math.isnan(r.value)


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    """A demo store of its own: a test adds documents to it."""
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    build_demo(g)
    return g


@pytest.mark.parametrize("question", ["Hahn", "Bank", "the bank of the river", BRANCHES[0]])
def test_every_result_has_a_relevance_in_0_1(kg: KnowledgeGraph, question: str) -> None:
    a = kg.ask(question)
    assert a.results
    assert all(0.0 <= r.relevance <= 1.0 for r in a.results)
    assert answer_dict(a)["results"][0]["relevance"] == a.results[0].relevance
    assert len({r.relevance for r in a.results}) > 1   # it tells documents apart


def test_relevance_does_not_move_when_documents_are_added_but_the_score_does(kg: KnowledgeGraph) -> None:
    before = {r.doc_id: r for r in kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=50).results}
    kg.index_documents([SourceDocument(f"relevance-extra-{i}", "The old oak tree stood by the river.",
                                       "en") for i in range(5)])
    try:
        after = {r.doc_id: r for r in kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=50).results}
    finally:
        kg.delete_many([f"relevance-extra-{i}" for i in range(5)])
    common = sorted(set(before) & set(after))
    assert len(common) >= 5
    assert all(after[d].relevance == before[d].relevance for d in common)
    assert any(after[d].score != before[d].score for d in common)   # rarity (idf) moved


def test_min_score_keeps_documents_at_or_above_it_and_an_empty_cut_says_why(kg: KnowledgeGraph) -> None:
    full = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=50)
    cut = sorted(r.relevance for r in full.results)[len(full.results) // 2]
    kept = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=50, min_score=cut)
    assert [r.doc_id for r in kept.results] == [r.doc_id for r in full.results if r.relevance >= cut]
    assert 0 < len(kept.results) < len(full.results) and kept.reason == ""
    # k counts the documents kept: the cut is made before the top k are taken
    top = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=2, min_score=cut)
    assert [r.doc_id for r in top.results] == [r.doc_id for r in kept.results][:2]
    best = max(r.relevance for r in full.results)
    none = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], min_score=1.0)
    assert best < 1.0 and none.results == ()
    assert f"no document reaches the minimum relevance 1: {len(full.results)} matched" in none.reason
    assert f"{best:.3f}" in none.reason


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, "0.5", True, None])
def test_a_min_score_outside_0_1_is_an_input_error(kg: KnowledgeGraph, bad: object) -> None:
    with pytest.raises(InputError, match="between 0 and 1"):
        kg.ask("Hahn", min_score=bad)  # type: ignore[arg-type]
    assert check_min_relevance(0) == 0.0 and check_min_relevance(1) == 1.0


def test_the_explanation_replays_the_relevance(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    for r in a.results[:3]:
        ex = kg.explain(a.question_iri, document=r.doc_iri)
        assert ex.summary["result"]["relevance"] == pytest.approx(r.relevance, abs=1e-6)
        cov = ex.summary["result"]["coverage"]
        mentions = sorted((m.mention for m in a.mentions), key=lambda m: (m.start, -m.end))
        assert [c["text"] for c in cov] == [m.text for m in mentions]
        assert any(c["weight"] > 1 for c in cov)        # the focus
        assert f"relevance {r.relevance:.2f}" in ex.text()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.lists(st.sets(st.integers(0, 29), max_size=30), min_size=1, max_size=6),
       st.sets(st.integers(0, 34), max_size=12))
def test_the_shown_documents_found_at_once_give_what_one_at_a_time_gives(
        n_docs: int, per_concept: list[set[int]], shown: set[int]) -> None:
    """``Scores.prefetch`` (one vectorised search per concept for the documents about to be
    shown) changes nothing in their terms and postings: documents without a posting of a concept,
    documents without any, and names that are no document included."""
    from kg_rag.pipeline.retrieve import _ConceptTerms

    docs = [f"urn:kgr-test:d{i}" for i in range(n_docs)]
    found: dict[str, ConceptPostings] = {}
    terms = []
    for k, nums in enumerate(per_concept):
        d = np.array(sorted(n for n in nums if n < n_docs), dtype=np.int64)
        cp = ConceptPostings(d, d + 1, d * 0.5, np.full(len(d), 0.25))
        found[f"urn:kgr-test:c{k}"] = cp
        terms.append(_ConceptTerms(f"urn:kgr-test:c{k}", cp, 1.0, 1.0 + k, d * 2.0, d * 3.0, d * 4.0))
    names = [f"urn:kgr-test:d{i}" for i in sorted(shown)]   # d30… are no document

    def spelled(prefetch: bool) -> list[tuple[object, object]]:
        scores = Scores({}, Gathered(docs, found), terms, np.ones(n_docs))
        if prefetch:
            scores.prefetch(names)
        return [(scores.terms(d), scores.postings.get(d)) for d in names]

    assert spelled(True) == spelled(False)
