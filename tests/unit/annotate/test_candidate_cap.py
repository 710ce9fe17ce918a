"""A word with thousands of senses (a hostile or broken dictionary; issue 22: 10⁵ senses made one
`ask` take 180 s and 3.1 GB) keeps at most ``KG_RAG_MAX_CANDIDATES`` readings, those of lowest
sense rank, before any evidence is fetched or a selector runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.documents.readers import SourceDocument
from kg_rag.settings import settings

N = 400


def _dictionary(path: Path) -> Path:
    # a DMLex-like order through lexicog members would do too; kgr:senseRank is what loaders write.
    # Sense i has rank N - i, so IRI order and rank order disagree: the cut must follow the rank.
    lines = ["@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .",
             "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .",
             "@prefix kgr: <https://w3id.org/kg-rag/ns#> .",
             "@prefix ex: <http://example.org/> .",
             'ex:e a ontolex:LexicalEntry ; ontolex:canonicalForm ex:f . ex:f ontolex:writtenRep "zork"@en .']
    for i in range(N):
        lines.append(f"ex:e ontolex:sense ex:s{i:04d} . ex:s{i:04d} ontolex:reference ex:c{i:04d} ; "
                     f"kgr:senseRank {N - i} . ex:c{i:04d} a skos:Concept ; "
                     f'skos:prefLabel "zork reading {i}"@en ; skos:definition "reading {i} of zork"@en .')
    f = path / "many.ttl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


@pytest.fixture(autouse=True)
def _settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv("KG_RAG_MAX_CANDIDATES", raising=False)
    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture
def kg(tmp_path: Path) -> Iterator[KnowledgeGraph]:
    g = KnowledgeGraph.open(str(tmp_path / "store"))
    g.load([_dictionary(tmp_path)])
    yield g
    g.close()


def _ranks(kg: KnowledgeGraph) -> list[int]:
    (m,) = kg.annotate("a zork here", lang="en", wsd="none", record_question=False)
    return sorted(c.rank for c in m.mention.candidates if c.rank is not None)


def test_default_cap_keeps_the_250_of_lowest_rank(kg: KnowledgeGraph, caplog: pytest.LogCaptureFixture) -> None:
    assert _ranks(kg) == list(range(1, 251))
    assert "has 400 readings; the 250 of lowest sense rank are kept (KG_RAG_MAX_CANDIDATES)" in caplog.text


def test_cap_is_a_setting_and_applies_to_questions(kg: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KG_RAG_MAX_CANDIDATES", "5")
    settings.cache_clear()
    assert _ranks(kg) == [1, 2, 3, 4, 5]
    kg.index_documents([SourceDocument(id="d1", text="a zork is here", lang="en")])
    a = kg.ask("what is a zork", lang="en", record_question=False)
    assert [len(r.mention.candidates) for r in a.mentions] == [5]
    assert a.results and a.results[0].doc_id == "d1"


def test_a_word_under_the_cap_keeps_every_reading(tmp_path: Path) -> None:
    g = KnowledgeGraph.open(str(tmp_path / "small"))
    f = tmp_path / "few.ttl"
    f.write_text(_dictionary(tmp_path).read_text(encoding="utf-8").split("\nex:e ontolex:sense ex:s0003")[0]
                 + "\n", encoding="utf-8")
    g.load([f])
    try:
        assert _ranks(g) == [N - 2, N - 1, N]
    finally:
        g.close()


def test_bad_cap_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from kg_rag.errors import ConfigError

    monkeypatch.setenv("KG_RAG_MAX_CANDIDATES", "0")
    settings.cache_clear()
    with pytest.raises(ConfigError, match="KG_RAG_MAX_CANDIDATES"):
        settings()
