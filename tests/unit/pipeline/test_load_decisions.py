"""Reading stored decisions back (``decide.load_decisions``): a decision's own fields, then the
candidates of the decisions found — and nothing more for IRIs that are not stored."""

from __future__ import annotations

from typing import Any

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.namespaces import DECISIONS_GRAPH, KGR
from kg_rag.pipeline.decide import load_decisions
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    g.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return g


def _asked(kg: KnowledgeGraph, text: str) -> Any:
    ans = kg.ask(text, lang="he")
    return [m for m in ans.mentions if m.mention.ambiguous][0]


def _counting(store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    select = store.select

    def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(name)
        return select(name, *args, **kwargs)

    monkeypatch.setattr(store, "select", spy)
    return asked


def test_a_stored_decision_comes_back_with_every_candidate_score(
        kg: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _asked(kg, "הגבר קרא בקול עם הזריחה")
    assert r.decision is not None and r.selection is not None
    absent = "https://w3id.org/kg-rag/id/decision/not-stored"
    asked = _counting(kg.store, monkeypatch)   # type: ignore[arg-type]
    got = load_decisions(kg.store, [NamedNode(r.decision), NamedNode(absent)],
                         {r.decision: r.mention, absent: r.mention}, "knowledge")
    assert set(got) == {r.decision}
    sel = got[r.decision]
    assert dict(sel.scores) == pytest.approx(dict(r.selection.scores))
    assert len(sel.scores) == len(r.mention.candidates) > 1
    assert sel.chosen == r.selection.chosen
    assert sel.confidence == pytest.approx(r.selection.confidence)
    assert asked == ["select-decisions", "select-decision-candidates"]


def test_absent_decisions_cost_one_query(kg: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    r = _asked(kg, "הגבר קרא בקול עם הזריחה")
    asked = _counting(kg.store, monkeypatch)   # type: ignore[arg-type]
    absent = [f"https://w3id.org/kg-rag/id/decision/not-stored-{i}" for i in range(3)]
    got = load_decisions(kg.store, [NamedNode(a) for a in absent], dict.fromkeys(absent, r.mention),
                         "knowledge")
    assert got == {}
    assert asked == ["select-decisions"]


def test_a_decision_without_candidates_is_not_reused(kg: KnowledgeGraph) -> None:
    r = _asked(kg, "הגבר קרא בקול עם הזריחה")
    store = kg.store
    assert isinstance(store, EmbeddedStore) and r.decision is not None
    engine = store.oxigraph
    links = list(engine.quads_for_pattern(NamedNode(r.decision), KGR.candidate, None, DECISIONS_GRAPH))
    assert links
    for q in links:
        engine.remove(q)
    try:
        assert load_decisions(store, [NamedNode(r.decision)], {r.decision: r.mention}, "knowledge") == {}
    finally:
        for q in links:
            engine.add(q)
