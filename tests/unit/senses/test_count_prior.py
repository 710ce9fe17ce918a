"""The English frequency prior from corpus tag counts (WordNet's cntlist as kgr:SenseFrequency
records): used where the store holds counts for a mention's candidates, the rank prior where it
does not."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.senses.knowledge.prior import count_prior

DICT = """@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix kgr: <https://w3id.org/kg-rag/ns#> .
@prefix ex: <http://example.org/> .
ex:e a ontolex:LexicalEntry ; ontolex:canonicalForm ex:f ; ontolex:sense ex:s1, ex:s2 .
ex:f ontolex:writtenRep "quill"@en .
ex:s1 ontolex:isLexicalizedSenseOf ex:feather ; kgr:senseRank 1 ; kgr:senseKey "quill%1:05:00::" .
ex:s2 ontolex:isLexicalizedSenseOf ex:pen ; kgr:senseRank 2 ; kgr:senseKey "quill%1:06:00::" .
ex:feather a skos:Concept ; skos:prefLabel "feather"@en ; skos:definition "a large stiff feather"@en .
ex:pen a skos:Concept ; skos:prefLabel "pen"@en ; skos:definition "a pen made from a feather"@en .
"""


def test_count_prior_is_the_smoothed_relative_frequency() -> None:
    p = count_prior(["a", "b", None], [1, 2, 3], {"a": 3, "b": 0})
    assert p is not None
    z = 1 + 1 / 2 + 1 / 3
    assert p == pytest.approx([math.log((3 + 1 / z) / 4), math.log((0.5 / z) / 4), math.log((1 / 3 / z) / 4)])
    assert sum(math.exp(x) for x in p) == pytest.approx(1.0)
    # no candidate counted: no count prior (the rank prior stands)
    assert count_prior(["x", None], [1, 2], {"a": 3}) is None


@pytest.fixture
def kg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KnowledgeGraph]:
    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "quill.ttl").write_text(DICT, encoding="utf-8")
    g = KnowledgeGraph.open(str(tmp_path / "store"))
    g.load([tmp_path / "quill.ttl"])
    yield g
    g.close()


def _choice(kg: KnowledgeGraph) -> tuple[str, float]:
    (m,) = kg.annotate("a quill", lang="en", wsd="knowledge", record_question=False)
    assert m.selection is not None and m.selection.chosen is not None
    return m.selection.chosen.concept, dict(m.selection.scores)[m.selection.chosen.id]


def test_counts_decide_where_the_store_holds_them(kg: KnowledgeGraph, tmp_path: Path) -> None:
    concept, p_rank = _choice(kg)
    assert concept == "http://example.org/feather"        # the rank prior: sense 1
    counts = tmp_path / "quill-cntlist.rev"
    counts.write_text("quill%1:06:00:: 2 40\nquill%1:05:00:: 1 2\n", encoding="utf-8")
    kg.load([counts], fmt="cntlist")
    concept, p = _choice(kg)
    assert concept == "http://example.org/pen"            # 40 tags against 2
    # more sure than the rank prior was of sense 1 (both tempered by the English sharpness)
    assert p > p_rank > 0.5
