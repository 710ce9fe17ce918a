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


def test_cache_files_of_catalog_versions_unused_for_a_month_are_swept(tmp_path: Path) -> None:
    """The cache folder keeps a file per catalog version of each derived kind; those nobody used
    for STALE_DAYS (a store loaded into since, or deleted) are removed — with their SQLite
    companions — and nothing else: not a recent one, nor files named otherwise."""
    import os
    import time

    from kg_rag.derived import STALE_DAYS, sweep_stale

    now = time.time()
    old = now - (STALE_DAYS + 1) * 86_400
    v1, v2 = "a" * 24, "0123456789abcdef01234567"
    names = {f"lexicon-lex-1-{v1}.npz": old, f"facts-2-{v1}.sqlite": old,
             f"facts-2-{v1}.sqlite-wal": now, f"facts-2-{v1}.sqlite-shm": now,
             f"wsd-kb-3-{v2}.npz": now - (STALE_DAYS - 1) * 86_400,   # used within the month
             "shared-facts-1.sqlite": old, "gloss-words-12d10d3022c35844.bin": old,
             f"notes-{v1}.txt": old, f"unindexed-evx-2-{v1}.chars": old}
    for name, t in names.items():
        (tmp_path / name).write_bytes(b"x")
        os.utime(tmp_path / name, (t, t))
    (tmp_path / "postings").mkdir()
    removed = {p.name for p in sweep_stale(tmp_path, now)}
    assert removed == {f"lexicon-lex-1-{v1}.npz", f"facts-2-{v1}.sqlite", f"facts-2-{v1}.sqlite-wal",
                       f"facts-2-{v1}.sqlite-shm", f"unindexed-evx-2-{v1}.chars"}
    assert {p.name for p in tmp_path.iterdir()} == set(names) - removed | {"postings"}
    assert sweep_stale(tmp_path, now + 365 * 86_400) == []   # once a process and folder


def test_a_cache_file_in_use_is_kept_by_the_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asking for a version's file notes its use: a file older than the sweep's month that a store
    still asks for is not removed by the next process."""
    import os
    import time

    from kg_rag import derived as module
    from kg_rag.derived import STALE_DAYS, sweep_stale

    store = EmbeddedStore(":memory:")
    derived = Derived.of(store, tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    path = derived.cache_dir / f"lexicon-lex-1-{derived.version()}.npz"
    path.write_bytes(b"x")
    long_ago = time.time() - (STALE_DAYS + 5) * 86_400
    os.utime(path, (long_ago, long_ago))
    assert derived.cache_file("lexicon-lex-1", ".npz") == path
    assert time.time() - path.stat().st_mtime < 60
    monkeypatch.setattr(module, "_SWEPT", set())   # the next process
    assert sweep_stale(derived.cache_dir) == []
    assert path.exists()
