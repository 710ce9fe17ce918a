"""What is derived from one store's contents, kept in ONE registry per store.

The annotator's lexicon, the knowledge base of the knowledge selector, concept evidence, verb
frames, stored decisions: each is built from what the store holds and kept in memory (and the
knowledge base on disk, under ``Settings.cache_dir``) until the store's vocabularies change.
They all live in the store's :class:`Derived` registry — keyed by ONE catalog version
(:func:`catalog_version`), guarded by ONE lock, emptied by ONE call (:meth:`Derived.invalidate`,
which :meth:`kg_rag.api.KnowledgeGraph.invalidate` calls after a load or a drop).

The module that fills an entry declares it, typed::

    EVIDENCE: Table[str, ConceptEvidence] = Table("concept-evidence", 20_000)   # a bounded LRU
    KB: Slot[KnowledgeBase] = Slot("knowledge-base")                           # one value

    Derived.of(store).table(EVIDENCE).get(iri)
    Derived.of(store).value(KB, lambda: build(store))

:meth:`Derived.of` gives every caller of a store the same registry — a
:class:`~kg_rag.api.KnowledgeGraph` and a function called with the store alone (evaluation,
benchmarks) share it. The registry holds no reference to the store (it lives as long as the store).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast

from kg_rag.cache import LRU
from kg_rag.errors import StoreError
from kg_rag.store import Store

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Table(Generic[K, V]):
    """A named, bounded LRU table of a registry (facts that never change under their key until
    the vocabularies change)."""

    name: str
    size: int


@dataclass(frozen=True, slots=True)
class Slot(Generic[T]):
    """A named value of a registry, built once per catalog version. ``key`` tells apart slots
    of one kind (e.g. the knowledge base with or without its disk cache)."""

    name: str
    key: Hashable = None


def _catalog_hash(store: Store) -> hashlib._Hash:
    h = hashlib.sha256()
    for row in store.select("select-catalog-state"):
        for k in ("g", "sha", "time", "triples"):
            t = row.get(k)
            h.update(b"\x1f" + (t.value.encode("utf-8") if t is not None else b"-"))
        h.update(b"\x1e")
    return h


def catalog_stamp(store: Store) -> str:
    """The catalog part of :func:`catalog_version` alone (one small query): what another process
    changes when it loads or drops a source or reviews alignments."""
    return _catalog_hash(store).hexdigest()[:24]


def catalog_version(store: Store) -> str:
    """THE version of what is loaded: a hash of the catalog (sources, checksums, load times,
    sizes) and of the number of match keys (vocabularies written without a catalog record).
    Equal versions mean equal derived data, so caches — in memory and on disk — are keyed by it."""
    h = _catalog_hash(store)
    rows = store.select("select-match-key-count")
    h.update(b"n=" + (rows[0]["n"].value.encode() if rows and "n" in rows[0] else b"0"))
    return h.hexdigest()[:24]


_MISSING = object()


class Derived:
    """The derived data of one store (see the module docstring)."""

    def __init__(self, store: Store, cache_dir: Path) -> None:
        self._store = weakref.ref(store)
        #: where large derived data (the knowledge base) is kept between processes
        self.cache_dir = cache_dir
        #: the one lock of the registry: its tables, values and version
        self.lock = threading.RLock()
        self._version: str | None = None
        self._tables: dict[str, LRU[object, object]] = {}
        self._values: dict[tuple[str, Hashable], object] = {}
        #: bumped by every :meth:`invalidate`: holders of derived objects compare it
        self.generation = 0
        self._stamp: str | None = None   # catalog_stamp when the derived data was first used

    # --- one registry per store -------------------------------------------------------------
    @classmethod
    def of(cls, store: Store, cache_dir: Path | None = None) -> Derived:
        """The registry of ``store`` (made on first use; ``cache_dir`` — from the settings of
        whoever owns the store — replaces the default :attr:`Settings.cache_dir`)."""
        with _REGISTRIES_LOCK:
            reg = _REGISTRIES.get(store)
            if reg is None:
                if cache_dir is None:
                    from kg_rag.settings import settings

                    cache_dir = Path(settings().cache_dir)
                reg = _REGISTRIES[store] = cls(store, cache_dir)
            elif cache_dir is not None:
                reg.cache_dir = cache_dir
            return reg

    @property
    def store(self) -> Store:
        s = self._store()
        if s is None:
            raise StoreError("the store of this registry was closed and released")
        return s

    # --- entries ----------------------------------------------------------------------------
    def version(self) -> str:
        """:func:`catalog_version` of the store, asked once per generation."""
        with self.lock:
            if self._version is None:
                self._version = catalog_version(self.store)
            return self._version

    def cache_file(self, kind: str, suffix: str) -> Path:
        """The file ``<kind>-<catalog version><suffix>`` of the cache folder: where ``kind`` (a
        name and its format, e.g. ``lexicon-lex-1``) of this store's catalog version is kept.
        Noted as used (its modification time moved to now, at most once a day), so that the
        files of catalog versions nobody uses any more — a store since loaded into, or gone —
        are removed by the first process that asks for a file after they were unused for
        :data:`STALE_DAYS` (:func:`sweep_stale`)."""
        path = self.cache_dir / f"{kind}-{self.version()}{suffix}"
        _note_use(path)
        sweep_stale(self.cache_dir)
        return path

    def table(self, spec: Table[K, V]) -> LRU[K, V]:
        with self.lock:
            t = self._tables.get(spec.name)
            if t is None:
                t = self._tables[spec.name] = LRU(spec.size, self.lock)
            return cast(LRU[K, V], t)

    def value(self, slot: Slot[T], build: Callable[[], T]) -> T:
        """The value of ``slot``, built (under the lock, once) when absent."""
        key = (slot.name, slot.key)
        with self.lock:
            v = self._values.get(key, _MISSING)
            if v is _MISSING:
                v = self._values[key] = build()
            return cast(T, v)

    def contents(self) -> dict[str, int]:
        """How many entries each table holds and which values are built (1 each), by name."""
        with self.lock:
            out = {name: len(t) for name, t in self._tables.items()}
            for name, _ in self._values:
                out[name] = out.get(name, 0) + 1
            return out

    def refresh(self) -> bool:
        """For a store other processes write (a remote endpoint): forget everything derived when
        its catalog changed since it was last checked — another process loaded or dropped a
        vocabulary (:func:`catalog_stamp`, one small query). An embedded store has one writer,
        this process, which invalidates itself: nothing is asked. True when it invalidated."""
        store = self.store
        if store.kind == "embedded":
            return False
        stamp = catalog_stamp(store)
        with self.lock:
            changed = self._stamp is not None and stamp != self._stamp
            if changed:
                self.invalidate()
            self._stamp = stamp
            return changed

    def invalidate(self) -> None:
        """Forget everything derived (after loading or dropping a vocabulary)."""
        with self.lock:
            self._stamp = None
            self._version = None
            for t in self._tables.values():
                t.clear()
            self._values.clear()
            self.generation += 1


#: a cache file of a catalog version unused for this many days is removed (rebuilt if asked again)
STALE_DAYS = 30
#: the cache folder's files named by a catalog version (:meth:`Derived.cache_file`), with
#: SQLite's companions of a database
_VERSIONED = re.compile(r"^[a-z][a-z0-9-]*-[0-9a-f]{24}\.(npz|sqlite|chars)$")
_COMPANIONS = ("-wal", "-shm", "-journal")
_DAY = 86_400.0
_SWEPT: set[Path] = set()
_SWEPT_LOCK = threading.Lock()


def _note_use(path: Path) -> None:
    """Move ``path``'s modification time to now when it is more than a day old."""
    try:
        if time.time() - path.stat().st_mtime > _DAY:
            os.utime(path)
    except OSError:
        pass   # not made yet, or another process removed it: whoever uses it next makes it


def sweep_stale(folder: Path, now: float | None = None) -> list[Path]:
    """Remove, once per process and folder, the catalog-versioned cache files (and their SQLite
    companions) not used for :data:`STALE_DAYS`. Derived data only: a store that asks for one
    again rebuilds it. Returns what was removed."""
    with _SWEPT_LOCK:
        if folder in _SWEPT:
            return []
        _SWEPT.add(folder)
    cutoff = (time.time() if now is None else now) - STALE_DAYS * _DAY
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for e in entries:
        if not _VERSIONED.match(e.name):
            continue
        try:
            if e.stat().st_mtime >= cutoff:
                continue
            for p in [Path(e.path)] + [Path(e.path + c) for c in _COMPANIONS]:
                if p.exists():
                    p.unlink()
                    removed.append(p)
        except OSError as err:   # another process swept it, or it cannot be removed: later
            log.debug("cache file %s not removed: %s", e.name, err)
    if removed:
        log.info("removed %d cache file(s) unused for %d days from %s", len(removed), STALE_DAYS, folder)
    return removed


_REGISTRIES: weakref.WeakKeyDictionary[Store, Derived] = weakref.WeakKeyDictionary()
_REGISTRIES_LOCK = threading.Lock()


__all__ = ["STALE_DAYS", "Derived", "Slot", "Table", "catalog_stamp", "catalog_version", "sweep_stale"]
