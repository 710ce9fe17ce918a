"""One registry of derived data per store: one catalog version, one cache folder from the
settings, one call (KnowledgeGraph.invalidate) that empties every cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.derived import Derived, catalog_version
from kg_rag.resources import resource_path
from kg_rag.senses.knowledge.frames import has_frames, sense_frames
from kg_rag.settings import Settings, load_settings
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
EX = "https://example.org/kgr-test/"
PAPER = "הפירות העמיסו על הבדים"


def _vocabulary(path: Path, name: str, label: str) -> Path:
    path.write_text(
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        f"<{EX}{name}> a skos:Concept ; skos:prefLabel \"{label}\"@en ;\n"
        f"    skos:definition \"a word of the test vocabulary {name}\"@en .\n",
        encoding="utf-8")
    return path


def _concepts(kg: KnowledgeGraph, text: str) -> set[str]:
    return {c for r in kg.annotate(text, lang="en", wsd="none") for c in r.mention.concepts}


def test_a_vocabulary_loaded_after_a_first_ask_is_found(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(cache_dir=str(tmp_path)))
    kg.load([_vocabulary(tmp_path / "a.ttl", "apple", "apple")])
    kg.ask("an apple and a quince", lang="en")
    assert _concepts(kg, "an apple and a quince") == {EX + "apple"}
    kg.load([_vocabulary(tmp_path / "b.ttl", "quince", "quince")])
    assert _concepts(kg, "an apple and a quince") == {EX + "apple", EX + "quince"}
    answer = kg.ask("an apple and a quince", lang="en")
    assert {c for m in answer.mentions for c in m.mention.concepts} == {EX + "apple", EX + "quince"}


def test_invalidating_the_registry_is_seen_by_the_knowledge_graph(tmp_path: Path) -> None:
    """A vocabulary written past the knowledge graph (a loader called on the store) is found once
    the store's registry is invalidated: the annotator and selectors follow the registry."""
    from loaders import load_file

    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(cache_dir=str(tmp_path)))
    kg.load([_vocabulary(tmp_path / "a.ttl", "apple", "apple")])
    first = kg.annotator
    assert _concepts(kg, "apple quince") == {EX + "apple"}
    load_file(kg.store, _vocabulary(tmp_path / "b.ttl", "quince", "quince"))
    assert kg.annotator is first and _concepts(kg, "apple quince") == {EX + "apple"}  # cached
    Derived.of(kg.store).invalidate()
    assert kg.annotator is not first
    assert _concepts(kg, "apple quince") == {EX + "apple", EX + "quince"}


def test_invalidate_empties_every_derived_cache_in_one_call(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(cache_dir=str(tmp_path)))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    kg.index([DEMO / "documents"])
    selector = kg.selector("knowledge")
    kg.ask(PAPER, lang="he")
    has_frames(kg.store)
    sense_frames(kg.store, [EX + "sense"])
    filled = kg.derived.contents()
    # (evidence comes from the store's evidence index on an embedded store: concept-evidence is
    # the per-call path's table)
    for name in ("lexicon", "knowledge-base", "evidence-index", "postings-checked",
                 "has-frames", "sense-frames"):
        assert filled.get(name, 0) > 0, name
    version = kg.derived.version()
    kg.invalidate()
    assert set(kg.derived.contents().values()) == {0}
    assert kg.selector("knowledge") is not selector
    assert kg.derived.version() == version == catalog_version(kg.store)  # nothing was loaded


def test_one_registry_per_store(tmp_path: Path) -> None:
    store = EmbeddedStore(":memory:")
    kg = KnowledgeGraph(store, Settings(cache_dir=str(tmp_path / "kb")))
    assert Derived.of(store) is kg.derived
    assert kg.derived.cache_dir == tmp_path / "kb"
    assert Derived.of(EmbeddedStore(":memory:")) is not kg.derived


def test_the_catalog_version_follows_loads(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(cache_dir=str(tmp_path)))
    empty = catalog_version(kg.store)
    kg.load([_vocabulary(tmp_path / "a.ttl", "apple", "apple")])
    assert catalog_version(kg.store) != empty
    assert kg.derived.version() == catalog_version(kg.store)
    assert kg.annotator.lexicon.version == kg.derived.version()  # type: ignore[attr-defined]


@pytest.mark.parametrize("env", [{}, {"XDG_CACHE_HOME": "/srv/cache"}, {"KG_RAG_CACHE_DIR": "/x/y"}])
def test_the_cache_folder_is_a_setting(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("XDG_CACHE_HOME", "KG_RAG_CACHE_DIR"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    got = load_settings(env).cache_dir
    if "KG_RAG_CACHE_DIR" in env:
        assert got == "/x/y"
    elif "XDG_CACHE_HOME" in env:
        assert got == "/srv/cache/kg-rag"
    else:
        assert got == str(Path.home() / ".cache" / "kg-rag")
