"""The evidence of every sense and concept, and the readings of every lemma, precomputed per store.

:func:`kg_rag.pipeline.evidence.fetch_evidence` and
:func:`kg_rag.annotate.candidates.lemma_readings` ask the store a few SPARQL queries per call; the
engine parses and plans each query text anew (~0.1–0.5 ms each), which made looking up a lemma's
senses with their definitions ~25× slower than the ``wn`` library's indexed SQL. Both read facts
of the loaded vocabularies only, which change only with the catalog version
(:func:`kg_rag.derived.catalog_version`), so on an embedded store they are read once for the
whole store and kept in two tables:

* :class:`EvidenceIndex` (``evidence-…sqlite``): sense IRI → its sense-level evidence, concept IRI
  → its concept-level evidence — from ``select-sense-evidence``, ``select-concept-evidence`` and
  ``select-concept-hierarchy`` run without bindings, grouped exactly as the per-call path groups
  them (the same :func:`~kg_rag.pipeline.evidence._add`, rows in the engine's order);
* :class:`LemmaIndex` (``lemmas-…sqlite``): (match key, language) → the rows of
  ``select-lemma-candidates``, turned into readings by the same code as the per-call path.

Each is a SQLite database: a large one is written under ``Settings.cache_dir`` keyed by the
catalog version (the next process opens it: no rows are held in Python memory), a small one (tests,
the demo) stays in memory. They live in the store's registry (:class:`kg_rag.derived.Derived`),
emptied when a vocabulary is loaded or dropped. A remote store keeps the per-call queries (another
process may change it; its engine may order rows differently).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kg_rag.derived import Derived, Slot
from kg_rag.store import Store

if TYPE_CHECKING:
    from kg_rag.pipeline.evidence import _Parts

log = logging.getLogger(__name__)

#: the layout of the files (bump when a table or a record changes)
FORMAT = "evx-1"
#: tables with fewer rows stay in memory (built in milliseconds)
DISK_MIN_ROWS = 20_000
#: a store with fewer match keys is indexed on first use; a larger one when asked (:func:`prepare`)
SMALL_KEYS = 20_000
SMALL: Slot[bool] = Slot("evidence-index-small")
#: the one table of each database: key → JSON record
_CREATE = "CREATE TABLE records (k TEXT PRIMARY KEY, rec TEXT NOT NULL) WITHOUT ROWID"
_INSERT = "INSERT INTO records (k, rec) VALUES (?, ?)"
_COUNT = "SELECT count(*) FROM records"
_ONE = "SELECT rec FROM records WHERE k = ?"
_MANY = "SELECT k, rec FROM records WHERE k IN ({})"
#: IRIs per ``IN (…)`` of one SQLite query (its default limit of variables is 32,766)
_CHUNK = 500


class _Table:
    """One read-only key → JSON record table in a SQLite database, safe across threads; a
    forked process opens the file again (SQLite connections must not cross a fork)."""

    def __init__(self, db: sqlite3.Connection, path: Path | None) -> None:
        self._db = db
        self._path = path            # the file, or None: in memory (a fork gets a copy)
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        if self._path is not None and self._pid != os.getpid():
            self._db = _open_ro(self._path)
            self._pid = os.getpid()
        return self._db

    def get(self, key: str) -> object | None:
        with self._lock:
            row = self._conn().execute(_ONE, (key,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        out: dict[str, object] = {}
        with self._lock:
            db = self._conn()
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                # only the number of placeholders is formatted in: the keys are bound
                q = _MANY.format(",".join("?" * len(chunk)))
                for k, rec in db.execute(q, tuple(chunk)):
                    out[k] = json.loads(rec)
        return out


def _open_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)


def _new_db(records: Iterable[tuple[str, str]]) -> tuple[sqlite3.Connection, int]:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute(_CREATE)
    db.executemany(_INSERT, records)
    db.commit()
    n = db.execute(_COUNT).fetchone()[0]
    return db, int(n)


def _path(derived: Derived, prefix: str) -> Path:
    return derived.cache_dir / f"{prefix}-{FORMAT}-{derived.version()}.sqlite"


def _open(derived: Derived, prefix: str) -> _Table | None:
    """The table from its disk file of this catalog version, if there is a readable one."""
    path = _path(derived, prefix)
    if not path.is_file():
        return None
    try:
        db = _open_ro(path)
        db.execute(_COUNT).fetchone()
    except sqlite3.Error as e:
        log.warning("ignoring the unreadable cache %s (%s); it will be rebuilt", path, e)
        return None
    log.info("%s index read from %s", prefix, path)
    return _Table(db, path)


def _build(derived: Derived, prefix: str,
           records: Callable[[], Iterable[tuple[str, str]]]) -> _Table:
    """The table built from the store now (and written to disk when large)."""
    t0 = time.perf_counter()
    db, n = _new_db(records())
    log.info("%s index: %d records built in %.1fs", prefix, n, time.perf_counter() - t0)
    if n < DISK_MIN_ROWS:
        return _Table(db, None)
    path = _path(derived, prefix)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        disk = sqlite3.connect(tmp)
        with disk:
            db.backup(disk)
        disk.close()
        os.replace(tmp, path)
    except (OSError, sqlite3.Error) as e:
        log.warning("could not write the cache %s: %s", path, e)
        tmp.unlink(missing_ok=True)
        return _Table(db, None)
    db.close()
    return _Table(_open_ro(path), path)


@dataclass(slots=True)
class _Holder:
    """A registry's index: None until built or found on disk (``looked``: the disk was checked)."""

    table: _Table | None = None
    looked: bool = False


def _small(store: Store, derived: Derived) -> bool:
    """Whether the store's vocabularies are small enough to index on first use (milliseconds)."""
    def count() -> bool:
        rows = store.select("select-match-key-count")
        return int(rows[0]["n"].value) < SMALL_KEYS if rows and "n" in rows[0] else True
    return derived.value(SMALL, count)


def _table(store: Store, slot: Slot[_Holder], prefix: str,
           records: Callable[[], Iterable[tuple[str, str]]], build: bool) -> _Table | None:
    if store.kind != "embedded":
        return None
    derived = Derived.of(store)
    holder = derived.value(slot, _Holder)
    if holder.table is not None:
        return holder.table
    with derived.lock:
        if holder.table is None and not holder.looked:
            holder.table = _open(derived, prefix)
            holder.looked = True
        if holder.table is None and (build or _small(store, derived)):
            holder.table = _build(derived, prefix, records)
        return holder.table


# --- evidence -------------------------------------------------------------------------------

class EvidenceIndex:
    """Sense IRI → sense-level evidence record, concept IRI → concept-level evidence record
    (records as :mod:`kg_rag.pipeline.evidence` encodes them), in one table: keys
    ``"s " + IRI`` and ``"c " + IRI`` (a sense-only reading's concept is its sense), so that one
    SQLite query answers a whole :func:`~kg_rag.pipeline.evidence.fetch_evidence` call."""

    def __init__(self, table: _Table) -> None:
        self._table = table

    def records(self, senses: Sequence[str],
                concepts: Sequence[str]) -> tuple[dict[str, object], dict[str, object]]:
        """The records of ``senses`` and of ``concepts`` that have any (others have none)."""
        recs = self._table.get_many([*("s " + s for s in senses), *("c " + c for c in concepts)])
        by_sense: dict[str, object] = {}
        by_concept: dict[str, object] = {}
        for k, rec in recs.items():
            (by_sense if k[0] == "s" else by_concept)[k[2:]] = rec
        return by_sense, by_concept


def _evidence_records(store: Store, query: str, var: str, encode: Callable[[_Parts], str],
                      prefix: str, extra: Sequence[str] = ()) -> Iterable[tuple[str, str]]:
    from kg_rag.pipeline.evidence import _add, _Parts

    parts: dict[str, _Parts] = {}
    for q in (query, *extra):
        for r in store.select(q):
            iri = r[var].value
            p = parts.get(iri)
            if p is None:
                p = parts[iri] = _Parts.new()
            _add(p, r["kind"].value, r["text"])
    return ((prefix + iri, encode(p)) for iri, p in parts.items())


def _evidence_rows(store: Store) -> Iterable[tuple[str, str]]:
    from kg_rag.pipeline.evidence import encode_concept, encode_sense

    yield from _evidence_records(store, "select-sense-evidence", "sense", encode_sense, "s ")
    yield from _evidence_records(store, "select-concept-evidence", "concept", encode_concept,
                                 "c ", ("select-concept-hierarchy",))


#: the evidence index, in the store's registry
EVIDENCE_INDEX: Slot[_Holder] = Slot("evidence-index")


def evidence_index(store: Store, build: bool = False) -> EvidenceIndex | None:
    """The evidence index of an embedded ``store``: already made, or its disk file, or built now
    when ``build`` or the store is small; else None (the caller queries per call)."""
    t = _table(store, EVIDENCE_INDEX, "evidence", lambda: _evidence_rows(store), build)
    return EvidenceIndex(t) if t is not None else None


# --- lemma readings ---------------------------------------------------------------------------

#: the fields of a lemma row kept per reading, in this order
LEMMA_FIELDS = ("entry", "concept", "sense", "rank", "senseKey", "pos", "lemma", "g")


def lemma_key(key: str, lang: str) -> str:
    """The table key of a match key in a language (language tags compare case-insensitively)."""
    return f"{lang.lower()}\x1f{key}"


def _lemma_records(store: Store) -> Iterable[tuple[str, str]]:
    groups: dict[str, list[list[str | None]]] = {}
    for r in store.select("select-lemma-candidates"):
        k = r["key"]
        rows = groups.setdefault(lemma_key(k.value, k.language or ""), [])
        rows.append([r[f].value if f in r else None for f in LEMMA_FIELDS])
    return ((k, json.dumps(rows, ensure_ascii=False, separators=(",", ":")))
            for k, rows in groups.items())


class LemmaIndex:
    """(match key, language) → the rows of ``select-lemma-candidates`` for that key."""

    def __init__(self, table: _Table) -> None:
        self._table = table

    def rows(self, key: str, lang: str) -> list[list[str | None]]:
        rec = self._table.get(lemma_key(key, lang))
        return rec if isinstance(rec, list) else []


LEMMA_INDEX: Slot[_Holder] = Slot("lemma-index")


def lemma_index(store: Store, build: bool = False) -> LemmaIndex | None:
    """The lemma index of an embedded ``store``, as :func:`evidence_index` finds or builds it."""
    t = _table(store, LEMMA_INDEX, "lemmas", lambda: _lemma_records(store), build)
    return LemmaIndex(t) if t is not None else None


def prepare(store: Store, lemmas: bool = True) -> None:
    """Build (or open) the evidence index, and the lemma index when ``lemmas``, now: for a
    process that will look up many senses (a service, a batch, an evaluation). A large store's
    indexes are otherwise used only once some process has built them."""
    evidence_index(store, build=True)
    if lemmas:
        lemma_index(store, build=True)


__all__ = ["DISK_MIN_ROWS", "EVIDENCE_INDEX", "FORMAT", "LEMMA_FIELDS", "LEMMA_INDEX", "SMALL_KEYS",
           "EvidenceIndex", "LemmaIndex", "evidence_index", "lemma_index", "lemma_key", "prepare"]
