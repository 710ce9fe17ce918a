"""Vocabulary facts kept between processes (kg_rag.pipeline.kept_facts) — candidate origins,
concept labels and neighbours: a later process gets what an earlier one asked the store, without
asking it again, and the same answers as a store that keeps none; a load starts another table; a
small store keeps none; a forked process does not write (its parent keeps what it found); a cache that cannot be written is a
warning, never an error."""

from __future__ import annotations

import gc
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kg_rag.annotate.schemes import Schemes
from kg_rag.api import KnowledgeGraph
from kg_rag.derived import Derived
from kg_rag.pipeline import evidence_index
from kg_rag.pipeline.kept_facts import KeptFacts, kept_facts
from kg_rag.pipeline.retrieve import concept_labels, neighbours
from kg_rag.store import EmbeddedStore, open_store
from tests.support.paths import DATA

HERE = DATA / "schemes"
A = "https://example.org/econ-a/"
B = "https://example.org/econ-b/"
IRIS = [A + "bank", B + "bank", A + "inflation", B + "inflation", "urn:kgr-test:unknown"]


def _loaded(path: Path, files: list[str]) -> None:
    with KnowledgeGraph(open_store(path=str(path))) as kg:
        kg.load([HERE / f for f in files])
    del kg
    _reopen()


@pytest.fixture(autouse=True)
def not_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test vocabularies are small, and a small store keeps no table: count them as large."""
    monkeypatch.setattr(evidence_index, "SMALL_KEYS", 0)


def _asking(calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Record the name of every query the embedded store is asked (on the class: a patched
    instance would be held until the test ends, and its folder with it)."""
    select: Callable[..., Any] = EmbeddedStore.select

    def spy(self: EmbeddedStore, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return select(self, name, *args, **kwargs)

    monkeypatch.setattr(EmbeddedStore, "select", spy)


def _reopen() -> None:
    gc.collect()   # the engine releases the folder when the last reference goes


def test_a_later_process_reads_what_an_earlier_one_asked(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path, cache = tmp_path / "store", tmp_path / "cache"
    _loaded(path, ["econ-a.ttl", "econ-b.ttl"])
    calls: list[str] = []
    _asking(calls, monkeypatch)
    with EmbeddedStore(path) as first_store:
        Derived.of(first_store, cache_dir=cache)
        first = Schemes(first_store).origins(IRIS)
        assert "select-concept-schemes" in calls
        kept = kept_facts(first_store)
        assert kept is not None and kept.path.parent == cache and kept.path.is_file()
    del first_store, kept
    _reopen()
    bank = first[A + "bank"]
    assert bank is not None and bank.scheme == A + "scheme"
    assert first["urn:kgr-test:unknown"] is None
    with EmbeddedStore(path) as later_store:      # a new store object: a new registry, as a new process
        Derived.of(later_store, cache_dir=cache)
        calls.clear()
        assert Schemes(later_store).origins(IRIS) == first
        assert "select-concept-schemes" not in calls    # the unknown IRI was kept as unknown too
    with EmbeddedStore(":memory:") as memory:          # keeps none: asks, and answers the same
        KnowledgeGraph(memory).load([HERE / "econ-a.ttl", HERE / "econ-b.ttl"])
        assert kept_facts(memory) is None
        assert Schemes(memory).origins(IRIS) == first


def test_labels_and_neighbours_kept_for_a_later_process(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path, cache = tmp_path / "store", tmp_path / "cache"
    _loaded(path, ["econ-a.ttl", "econ-b.ttl"])
    concepts = [A + "inflation", A + "deflation", B + "deflation", "urn:kgr-test:unknown"]
    calls: list[str] = []
    _asking(calls, monkeypatch)
    with EmbeddedStore(path) as first_store:
        Derived.of(first_store, cache_dir=cache)
        labels = concept_labels(first_store, concepts, "en")
        near = neighbours(first_store, concepts)
        assert {"select-concept-labels", "select-concept-neighbours"} <= set(calls)
        kept = kept_facts(first_store)
        assert kept is not None
        assert kept.get_many("labels", [A + "inflation"]) == {A + "inflation": [["inflation", "en", "pref"]]}
    del first_store, kept
    _reopen()
    assert labels[A + "inflation"] == "inflation" and "urn:kgr-test:unknown" not in labels
    assert ("http://www.w3.org/2004/02/skos/core#related", A + "prices") in near[A + "inflation"]
    assert near["urn:kgr-test:unknown"] == ()
    with EmbeddedStore(path) as later_store:      # as a new process
        Derived.of(later_store, cache_dir=cache)
        calls.clear()
        assert concept_labels(later_store, concepts, "en") == labels
        assert neighbours(later_store, concepts) == near
        assert not {"select-concept-labels", "select-concept-neighbours"} & set(calls)
    with EmbeddedStore(":memory:") as memory:          # keeps none: asks, and answers the same
        KnowledgeGraph(memory).load([HERE / "econ-a.ttl", HERE / "econ-b.ttl"])
        assert kept_facts(memory) is None
        assert concept_labels(memory, concepts, "en") == labels
        assert neighbours(memory, concepts) == near


def test_a_load_starts_another_table(tmp_path: Path) -> None:
    path, cache = tmp_path / "store", tmp_path / "cache"
    _loaded(path, ["econ-a.ttl"])
    with EmbeddedStore(path) as store:
        Derived.of(store, cache_dir=cache)
        before = kept_facts(store)
        assert before is not None
        assert Schemes(store).origins([B + "bank"])[B + "bank"] is None   # not loaded yet
    del store
    _reopen()
    _loaded(path, ["econ-b.ttl"])
    with EmbeddedStore(path) as store:
        Derived.of(store, cache_dir=cache)
        after = kept_facts(store)
        assert after is not None and after.path != before.path
        got = Schemes(store).origins([B + "bank"])[B + "bank"]
        assert got is not None and got.source.endswith("/econ-b")


def test_a_small_store_keeps_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence_index, "SMALL_KEYS", 20_000)
    path, cache = tmp_path / "store", tmp_path / "cache"
    _loaded(path, ["econ-a.ttl"])
    with EmbeddedStore(path) as store:
        Derived.of(store, cache_dir=cache)
        assert kept_facts(store) is None
        assert Schemes(store).origins([A + "bank"])[A + "bank"] is not None
    assert not cache.exists() or not list(cache.glob("facts-*"))


def test_a_forked_copy_reads_but_does_not_write(tmp_path: Path) -> None:
    cache = KeptFacts(tmp_path / "o.sqlite")
    cache.put_many("origins", {"urn:kgr-test:a": ("urn:kgr-test:g", None)})
    cache._maker = -1          # as in a process forked from the one that made it
    cache.put_many("origins", {"urn:kgr-test:b": ("urn:kgr-test:g", "urn:kgr-test:s")})
    assert cache.get_many("origins", ["urn:kgr-test:a", "urn:kgr-test:b"]) == {"urn:kgr-test:a": ["urn:kgr-test:g", None]}
    # what it would have kept waits for its parent, taken once
    pending = cache.pending()
    assert pending == {"origins": {"urn:kgr-test:b": ("urn:kgr-test:g", "urn:kgr-test:s")}}
    assert cache.pending() == {}
    parent = KeptFacts(tmp_path / "o.sqlite")
    parent.keep_pending(pending)
    assert parent.get_many("origins", ["urn:kgr-test:b"]) == {"urn:kgr-test:b": ["urn:kgr-test:g", "urn:kgr-test:s"]}


def test_a_cache_that_cannot_be_written_is_a_warning(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = KeptFacts(blocker / "o.sqlite")
    with caplog.at_level(logging.WARNING, logger="kg_rag.pipeline.kept_facts"):
        cache.put_many("origins", {"urn:kgr-test:a": (None, None)})
        assert cache.get_many("origins", ["urn:kgr-test:a"]) == {}
    assert "not keeping vocabulary facts" in caplog.text


class _Refusing:
    """A connection whose writes fail, as a read-only or locked database's do."""

    def __init__(self) -> None:
        self.writes = 0

    def __enter__(self) -> _Refusing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def executemany(self, *args: object) -> None:
        self.writes += 1
        raise sqlite3.OperationalError("attempt to write a readonly database")


def test_a_table_that_refuses_writes_is_said_once(tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    cache = KeptFacts(tmp_path / "o.sqlite")
    refusing = _Refusing()
    cache._db = refusing  # type: ignore[assignment]
    with caplog.at_level(logging.WARNING, logger="kg_rag.pipeline.kept_facts"):
        for i in range(3):
            cache.put_many("origins", {f"urn:kgr-test:b{i}": (None, None)})
    assert refusing.writes == 1
    assert len(caplog.records) == 1 and "could not keep vocabulary facts" in caplog.text


def test_a_file_another_process_is_writing_is_skipped_this_time_only(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    from kg_rag.pipeline import kept_facts as module

    monkeypatch.setattr(module, "BUSY_TIMEOUT", 0.05)
    path = tmp_path / "f.sqlite"
    cache = KeptFacts(path)
    cache.put_many("labels", {"urn:kgr-test:a": [["a", "en", "pref"]]})
    other = sqlite3.connect(str(path), isolation_level=None)   # another process, mid-write
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO facts VALUES ('labels', 'urn:kgr-test:x', '[]')")
    with caplog.at_level(logging.WARNING, logger="kg_rag.pipeline.kept_facts"):
        cache.put_many("labels", {"urn:kgr-test:b": [["b", "en", "pref"]]})   # busy: skipped
        assert cache.get_many("labels", ["urn:kgr-test:a"]) == {"urn:kgr-test:a": [["a", "en", "pref"]]}
    other.execute("COMMIT")
    other.close()
    assert not caplog.records                    # nothing said, nothing disabled
    cache.put_many("labels", {"urn:kgr-test:b": [["b", "en", "pref"]]})
    assert set(cache.get_many("labels", ["urn:kgr-test:a", "urn:kgr-test:b", "urn:kgr-test:x"])) == {
        "urn:kgr-test:a", "urn:kgr-test:b", "urn:kgr-test:x"}


def test_a_thesaurus_concepts_readings_are_kept_for_a_later_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A concept matched by its label (no dictionary entry, so not in the lemma index) is asked
    of the store once per catalog version: a later process annotates from the kept readings."""
    from kg_rag.annotate.candidates import kept_readings, readings_of

    path, cache = tmp_path / "store", tmp_path / "cache"
    _loaded(path, ["econ-a.ttl", "econ-b.ttl"])
    owners = [A + "bank", B + "inflation", "urn:kgr-test:unknown"]
    calls: list[str] = []
    _asking(calls, monkeypatch)
    with EmbeddedStore(path) as first_store:
        Derived.of(first_store, cache_dir=cache)
        first = kept_readings(first_store, owners, "en")
        assert "select-candidates" in calls
        assert first == readings_of(first_store, owners, "en")
        with KnowledgeGraph(first_store) as kg:   # the annotator keeps what it asks
            kg.annotate("the bank", lang="en", wsd="none", record_question=False)
    del first_store, kg
    _reopen()
    assert first[A + "bank"] and set(first) == set(owners)
    with EmbeddedStore(path) as later_store:      # as a new process
        Derived.of(later_store, cache_dir=cache)
        calls.clear()
        assert kept_readings(later_store, owners, "en") == first
        assert "select-candidates" not in calls
        with KnowledgeGraph(later_store) as kg:   # the annotator reads them so too
            [m] = [r.mention for r in kg.annotate("the bank", lang="en", wsd="none",
                                                  record_question=False) if r.mention.text == "bank"]
            assert {c.concept for c in m.candidates} >= {A + "bank"}
        assert "select-candidates" not in calls
