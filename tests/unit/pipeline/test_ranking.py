"""One ranking arithmetic: its parameters in one RetrievalConfig (hashed into a version), each
result's score the sum of the contributions ``rank`` returns, and the parameters recorded with
the question as a ``kgr:Retrieval``."""

from __future__ import annotations

import dataclasses
import math

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError
from kg_rag.pipeline.ranking_config import (
    DEFAULT,
    EXPANSION,
    FOCUS_BOOST,
    SAME_MEANING,
    RetrievalConfig,
)
from kg_rag.serialize import result_dict
from tests.support.service_server import demo_store

BRANCHES = ("הפירות העמיסו על הבדים", (17, 22))   # fruit weighs down the branches (focus: הבדים)


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return KnowledgeGraph(demo_store())


def test_defaults_are_the_documented_constants() -> None:
    assert dict(DEFAULT.weights) == dict(EXPANSION)
    assert set(DEFAULT.same_meaning) == SAME_MEANING
    assert (DEFAULT.focus_boost, DEFAULT.match) == (FOCUS_BOOST, "fused")
    with pytest.raises(TypeError):
        EXPANSION["broader"] = 1.0  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.focus_boost = 1.0  # type: ignore[misc]


def test_version_hashes_every_parameter_and_nothing_else() -> None:
    v = DEFAULT.version
    assert len(v) == 12 and v == RetrievalConfig().version
    # the order the weights are given in does not matter: they are kept sorted
    shuffled = RetrievalConfig(expansion=tuple(reversed(DEFAULT.expansion)))
    assert shuffled == DEFAULT and shuffled.version == v
    variants = [DEFAULT.with_expansion({}), DEFAULT.with_expansion({**EXPANSION, "broader": 0.4}),
                dataclasses.replace(DEFAULT, same_meaning=("exactMatch",)),
                dataclasses.replace(DEFAULT, focus_boost=10.0), dataclasses.replace(DEFAULT, match="label")]
    versions = {c.version for c in variants}
    assert len(versions) == len(variants) and v not in versions
    assert dict(DEFAULT.with_expansion({}).weights) == {}


@pytest.mark.parametrize("change", [
    {"match": "body"}, {"match": "agreement"}, {"focus_boost": -1.0}, {"focus_boost": math.nan},
    {"expansion": (("broader", math.inf),)}, {"expansion": (("broader", "half"),)},
    {"expansion": (("broader", 0.5), ("broader", 0.4))},
])
def test_invalid_parameters_are_input_errors(change: dict[str, object]) -> None:
    with pytest.raises(InputError):
        dataclasses.replace(DEFAULT, **change)  # type: ignore[arg-type]


def test_a_score_is_the_sum_of_its_contributions(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    assert len(a.results) >= 3
    relations = set()
    for r in a.results:
        assert r.contributions
        total = 0.0
        for c in r.contributions:
            assert c.counted == pytest.approx(c.focus_factor * c.idf * c.expansion_weight * (
                c.question_weight * c.document_weight + c.question_probability * c.document_agreement))
            assert 0 <= c.question_probability <= 1 and 0 <= c.document_agreement <= c.document_weight
            assert c.annotations >= 1 and c.idf > 0
            assert (c.relation is None) == (c.question_concept == c.document_concept)
            relations.add(c.relation)
            total += c.counted
        assert r.score == round(total, 6)
        assert {c.document_concept for c in r.contributions} == {m.iri for m in r.concepts}
        assert result_dict(r)["contributions"][0]["counted"] == round(r.contributions[0].counted, 6)
    # the focus word's concept carries the boost; some result is reached by expansion too
    assert any(c.focus_factor == FOCUS_BOOST for c in a.results[0].contributions)
    assert relations - {None}


def test_without_expansion_no_contribution_comes_from_a_neighbour(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], expansion={})
    assert a.results
    assert all(c.relation is None and c.expansion_weight == 1.0 for r in a.results for c in r.contributions)


def _recorded(kg: KnowledgeGraph, question: str) -> list[dict[str, str]]:
    rows = kg.store.select("select-retrieval", bind={"question": NamedNode(question)})
    return [{k: v.value for k, v in r.items()} for r in rows]


def test_ask_records_its_parameters_with_the_question(kg: KnowledgeGraph) -> None:
    from kg_rag.pipeline.shapes import validate

    a = kg.ask(BRANCHES[0], lang="he", k=5, focus=BRANCHES[1], expansion={"broader": 0.25})
    rows = _recorded(kg, a.question_iri)
    scalars = [r for r in rows if "version" in r]
    assert len(scalars) == 1
    s = scalars[0]
    expected = DEFAULT.with_expansion({"broader": 0.25})
    assert s["version"] == expected.version and s["match"] == "fused" and s["wsd"] == a.wsd
    assert (s["k"], s["focusStart"], s["focusEnd"]) == ("5", "17", "22")
    assert float(s["focusBoost"]) == FOCUS_BOOST
    assert [(r["relation"], float(r["weight"])) for r in rows if "relation" in r] == [("broader", 0.25)]
    assert sorted(r["sameMeaning"] for r in rows if "sameMeaning" in r) == sorted(SAME_MEANING)
    conforms, report = validate(kg.store)
    assert conforms, report
    # asked again with other parameters, the record is the new one (the question graph is rewritten)
    b = kg.ask(BRANCHES[0], lang="he", wsd=a.wsd)
    assert b.question_iri == a.question_iri
    rows = _recorded(kg, b.question_iri)
    assert [r["version"] for r in rows if "version" in r] == [DEFAULT.version]
    assert not [r for r in rows if "focusStart" in r]
    assert len([r for r in rows if "relation" in r]) == len(EXPANSION)


def test_label_matching_is_recorded_as_label_matching(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", wsd="none")
    (s,) = [r for r in _recorded(kg, a.question_iri) if "version" in r]
    assert (s["match"], s["wsd"]) == ("label", "none")
    assert s["version"] == dataclasses.replace(DEFAULT, match="label").version


@pytest.mark.parametrize(("weights", "message"), [
    ({"broader": 50}, "from 0 to 1"), ({"broader": -5}, "from 0 to 1"),
    ({"bogus": 0.5}, r"unknown expansion relation\(s\) 'bogus'"), ("broader", "must map relation names")])
def test_expansion_weights_from_a_caller_are_checked(weights: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        DEFAULT.with_expansion(weights)  # type: ignore[arg-type]



def test_scores_arithmetic_over_all_concepts_at_once_is_each_concepts_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`score` does every concept's arithmetic in one pass over their postings end to end,
    and :meth:`Scores.prefetch` finds the shown documents in all of them in one search: against
    each concept on its own (a document's terms summed in the concepts' order; a posting found
    by its own search), on random postings."""
    import numpy as np

    from kg_rag.pipeline import retrieve
    from kg_rag.pipeline.postings import ConceptPostings, Gathered
    from kg_rag.pipeline.ranking_config import DEFAULT

    rng = np.random.default_rng(5)
    for trial in range(30):
        n_docs = int(rng.integers(1, 60))
        docs = [f"http://d/{i}" for i in range(n_docs)]
        found = {}
        for c in range(int(rng.integers(1, 15))):
            d = np.sort(rng.choice(n_docs, size=int(rng.integers(1, n_docs + 1)), replace=False))
            found[f"http://c/{c}"] = ConceptPostings(
                d.astype(np.int64), rng.integers(1, 5, len(d)).astype(np.int64),
                rng.random(len(d)) * 3, rng.random(len(d)))
        asked = [retrieve.QueryConcept(f"http://c/{c}", float(rng.random()), float(rng.random()),
                                       bool(rng.random() < 0.3)) for c in range(16)]
        g = Gathered(docs, found, n_docs)
        monkeypatch.setattr(retrieve, "gather", lambda store, cs, g=g: Gathered(
            g.docs, {c: g.concepts[c] for c in cs if c in g.concepts}, g.documents))
        config = DEFAULT if trial % 2 else dataclasses.replace(DEFAULT, match="label")
        s = retrieve.score(None, asked, config)  # type: ignore[arg-type]
        want = np.zeros(n_docs)
        for qc in asked:
            cp = found.get(qc.iri)
            if cp is None:
                continue
            idf = math.log(1.0 + n_docs / len(cp.doc))
            focus = config.focus_boost if qc.focus else 1.0
            agreement = retrieve._tf(cp.agreement) if config.match == "fused" else np.zeros(len(cp.doc))
            p = qc.probability if config.match == "fused" else 0.0
            want[cp.doc] += focus * idf * (qc.weight * retrieve._tf(cp.labels) + p * agreement)
        assert np.array_equal(s._totals, want)   # the same sums, in the same order: to the bit
        shown = [docs[i] for i in rng.choice(n_docs, size=min(n_docs, 5), replace=False)]
        s._seen.update({d: i for i, d in enumerate(docs)})
        s.prefetch(shown)
        for d in shown:
            n = docs.index(d)
            for c, cp in found.items():
                assert s._position(n, c, cp) == cp.index(n)
            assert s.postings.get(d, {}) == {c: cp.posting(i) for c, cp in found.items()
                                             if (i := cp.index(n)) is not None}
