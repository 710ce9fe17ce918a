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

Each is a SQLite database. A small store's (tests, the demo) is built in memory on first use. A
large store's is built only when a process asks for it (:func:`prepare`: the annotator's and the
knowledge selector's ``warm_up``, and the index run that brings the characters indexed without
them to as many as the store has match keys, :func:`worth_building`) — 30 s to two minutes for OEWN with three OMW
lexicons, reading the engine's rows one at a time into the database file — and written under
``Settings.cache_dir`` keyed by the catalog version, which every later process opens (no rows
held in Python memory); until then calls are answered by the per-call queries. Both live in the
store's registry (:class:`kg_rag.derived.Derived`), emptied when a vocabulary is loaded or
dropped. A remote store keeps the per-call queries (another process may change it; its engine
may order rows differently).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph

from kg_rag.derived import Derived, Slot
from kg_rag.errors import QueryError, StoreError
from kg_rag.store import Store, queries

log = logging.getLogger(__name__)

#: the layout of the files (bump when a table or a record changes)
FORMAT = "evx-2"
#: a store with fewer match keys is indexed in memory on first use (milliseconds); a larger one
#: into a file of the cache folder when a process asks (:func:`prepare`, ``build=True``)
SMALL_KEYS = 20_000
KEY_COUNT: Slot[int] = Slot("match-key-count")
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
        with self._lock:
            return {k: json.loads(rec) for k, rec in rows_in(self._conn(), _MANY, keys)}

    def discard(self) -> None:
        """Close it and remove its file (a table nobody may use)."""
        with self._lock:
            self._db.close()
            if self._path is not None:
                self._path.unlink(missing_ok=True)


def rows_in(db: sqlite3.Connection, sql: str, keys: Sequence[str],
            chunk: int = _CHUNK, before: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` — whose ``IN ({})`` takes the keys — for all of ``keys``, ``chunk``
    at a time (SQLite's bound-parameter limit); ``before``: the values of the placeholders
    before the ``IN``. Only the number of placeholders is formatted into the text: the keys
    themselves are bound."""
    for i in range(0, len(keys), chunk):
        part = tuple(keys[i : i + chunk])
        yield from db.execute(sql.format(",".join("?" * len(part))), (*before, *part))


def _open_ro(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)


def _rows(store: Store, name: str) -> Iterator[pyoxigraph.QuerySolution]:
    """The solutions of the query file ``name`` without bindings, read one at a time from the
    engine (``Store.select`` would hold all of them: over 1 GB for OEWN with three OMWs)."""
    q = queries.get(name)

    class _Solutions:
        def embedded(self, engine: pyoxigraph.Store) -> Iterator[pyoxigraph.QuerySolution]:
            res = engine.query(q.text)
            if not isinstance(res, pyoxigraph.QuerySolutions):
                raise QueryError(f"{name} is not a SELECT query")
            return iter(res)

        def remote(self, endpoint: str) -> Iterator[pyoxigraph.QuerySolution]:
            raise StoreError("the evidence index is built on an embedded store only")

    try:  # the engine reads lazily: damage may surface while the rows are iterated
        yield from store.on_engine(_Solutions())
    except (OSError, RuntimeError) as e:
        raise StoreError(f"{name} failed on the store at {store.location}: {e}") from None


def _new_db(path: Path | None) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
    db.execute(_CREATE)
    # rows as the engine gives them, grouped by key (in that order) once all are in
    db.execute("CREATE TABLE stage (seq INTEGER PRIMARY KEY, k TEXT NOT NULL, a TEXT, b TEXT, c TEXT)")
    return db


def _finish(db: sqlite3.Connection, group: Callable[[str, Iterable[tuple[str, str, str]]], str]) -> int:
    """Every key's staged rows (a, b, c) in order → its record; the stage dropped."""
    cur = db.execute("SELECT k, a, b, c FROM stage ORDER BY k, seq")
    records = ((k, group(k, ((a, b, c) for _, a, b, c in rows)))
               for k, rows in itertools.groupby(cur, key=lambda r: r[0]))
    db.executemany(_INSERT, records)
    db.execute("DROP TABLE stage")
    db.commit()
    return int(db.execute(_COUNT).fetchone()[0])


def _path(derived: Derived, prefix: str) -> Path:
    return derived.cache_file(f"{prefix}-{FORMAT}", ".sqlite")


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


def _build(path: Path | None, prefix: str, fill: Callable[[sqlite3.Connection], int]) -> _Table:
    """The table built from the store now: in memory for a small store (``path`` None), else in
    the file ``path`` of the cache folder (renamed into place when complete)."""
    t0 = time.perf_counter()
    if path is None:
        db = _new_db(None)
        n = fill(db)
        log.info("%s index: %d records built in memory in %.1fs", prefix, n, time.perf_counter() - t0)
        return _Table(db, None)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        db = _new_db(tmp)
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        n = fill(db)
        db.execute("VACUUM")
        db.close()
        os.replace(tmp, path)
    except (OSError, sqlite3.Error) as e:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"could not write the {prefix} index {path}: {e}; check that the cache "
                         f"folder (KG_RAG_CACHE_DIR) is writable and has space") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    log.info("%s index: %d records built in %.1fs into %s", prefix, n, time.perf_counter() - t0, path)
    return _Table(_open_ro(path), path)


@dataclass(slots=True)
class _Holder:
    """A registry's index: None until built or found on disk (``looked``: the disk was checked);
    ``building`` is held while one thread builds it (not the registry's lock: other threads keep
    answering by the per-call queries meanwhile)."""

    table: _Table | None = None
    looked: bool = False
    building: threading.Lock = field(default_factory=threading.Lock)


def _key_count(store: Store, derived: Derived) -> int:
    """How many match keys the store's vocabularies have (asked once per registry generation)."""
    def count() -> int:
        rows = store.select("select-match-key-count")
        return int(rows[0]["n"].value) if rows and "n" in rows[0] else 0
    return derived.value(KEY_COUNT, count)


def _small(store: Store, derived: Derived) -> bool:
    """Whether the store's vocabularies are small enough to index on first use (milliseconds)."""
    return _key_count(store, derived) < SMALL_KEYS


def is_small(store: Store) -> bool:
    """Whether ``store``'s vocabularies have fewer than :data:`SMALL_KEYS` match keys: its
    derived tables are made in memory when needed, none is kept on disk."""
    return _small(store, Derived.of(store))


def _table(store: Store, slot: Slot[_Holder], prefix: str,
           fill: Callable[[sqlite3.Connection], int], build: bool) -> _Table | None:
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
        if holder.table is not None:
            return holder.table
        small = _small(store, derived)
        if not (build or small):
            return None
        path = None if small else _path(derived, prefix)
        generation = derived.generation
    # built without the registry's lock (nothing below takes it: a thread that holds it while it
    # asks for an index cannot wait on a builder that waits for it)
    with holder.building:   # one build; a second asker waits for it
        if holder.table is None:
            table = _build(path, prefix, fill)
            if derived.generation != generation:
                # a vocabulary was loaded or dropped while it was built: its rows may mix both
                # catalogs, so it is not used (the registry has a new holder by now)
                table.discard()
                return None
            holder.table = table
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


def _fill_evidence(store: Store, db: sqlite3.Connection) -> int:
    from kg_rag.model import LangText
    from kg_rag.pipeline.evidence import _Parts, _text, add_text, encode_concept, encode_sense

    def stage(query: str, var: str, prefix: str) -> None:
        db.executemany("INSERT INTO stage (k, a, b, c) VALUES (?, ?, ?, ?)",
                       ((prefix + r[var].value, r["kind"].value, t.text, t.lang)
                        for r in _rows(store, query) for t in (_text(r["text"]),)))

    stage("select-sense-evidence", "sense", "s ")
    stage("select-concept-evidence", "concept", "c ")
    # where it stands in its thesaurus (after the concept's own rows, as the per-call path)
    stage("select-concept-hierarchy", "concept", "c ")

    def group(key: str, rows: Iterable[tuple[str, str, str]]) -> str:
        p = _Parts.new()
        for kind, text, lang in rows:
            add_text(p, kind, LangText(text, lang))
        return encode_sense(p) if key[0] == "s" else encode_concept(p)

    return _finish(db, group)


#: the evidence index, in the store's registry
EVIDENCE_INDEX: Slot[_Holder] = Slot("evidence-index")


def evidence_index(store: Store, build: bool = False) -> EvidenceIndex | None:
    """The evidence index of an embedded ``store``: already made, or its disk file, or built now
    when ``build`` or the store is small; else None (the caller queries per call)."""
    t = _table(store, EVIDENCE_INDEX, "evidence", lambda db: _fill_evidence(store, db), build)
    return EvidenceIndex(t) if t is not None else None


# --- lemma readings ---------------------------------------------------------------------------

#: the fields of a lemma row kept per reading, in this order
LEMMA_FIELDS = ("entry", "concept", "sense", "rank", "senseKey", "pos", "lemma", "g")


def lemma_key(key: str, lang: str) -> str:
    """The table key of a match key in a language (language tags compare case-insensitively)."""
    return f"{lang.lower()}\x1f{key}"


def _fill_lemmas(store: Store, db: sqlite3.Connection) -> int:
    def row(r: pyoxigraph.QuerySolution) -> tuple[str, str]:
        k = r["key"]
        values = [t.value if (t := r[f]) is not None else None for f in LEMMA_FIELDS]
        return lemma_key(k.value, k.language or ""), json.dumps(values, ensure_ascii=False)

    db.executemany("INSERT INTO stage (k, a) VALUES (?, ?)",
                   (row(r) for r in _rows(store, "select-lemma-candidates")))
    return _finish(db, lambda _, rows: "[" + ",".join(a for a, _, _ in rows) + "]")


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
    t = _table(store, LEMMA_INDEX, "lemmas", lambda db: _fill_lemmas(store, db), build)
    return LemmaIndex(t) if t is not None else None


def worth_building(store: Store, characters: int) -> bool:
    """Whether a run that indexes ``characters`` of text into ``store`` should build its lemma and
    evidence indexes first (:func:`prepare`): an embedded store that is not small, whose indexes
    are not on disk yet, once the characters indexed without them — this run's and those of every
    earlier run on the same catalog version, tallied in the cache folder — reach the store's match
    keys.

    A rent-or-buy rule: each character indexed without the indexes costs about what building them
    costs per match key (on the bench's OEWN + OMW + UNESCO store, 32 s for 261,363 keys against
    0.11 ms a character saved on one machine; 53.6 s for 285,927 keys against 0.095 ms a
    character — 800 documents, 53.9 s without and 37.5 s with them — on a slower one), so a run
    that long gains the build back within itself, and a store indexed in many shorter runs pays
    about one build's worth of slower runs before one of them builds, instead of paying on every
    run for ever. Every later run on the same vocabularies opens the files. A small store's
    indexes are made in memory on first use; a remote store's are never made."""
    if store.kind != "embedded" or characters <= 0:
        return False
    derived = Derived.of(store)
    keys = _key_count(store, derived)
    if keys < SMALL_KEYS or all(_path(derived, p).is_file() for p in ("evidence", "lemmas")):
        return False
    tally = derived.cache_file(f"unindexed-{FORMAT}", ".chars")
    total = _tally(tally) + characters
    if total >= keys:
        return True
    _set_tally(tally, total)
    return False


def _tally(path: Path) -> int:
    """The characters indexed so far without the indexes (0 when not recorded or unreadable)."""
    try:
        return max(0, int(path.read_text(encoding="ascii").strip() or 0))
    except (OSError, ValueError):
        return 0


def _set_tally(path: Path, n: int) -> None:
    """Record ``n`` (replaced whole; two runs at once may lose one's share: the build comes a
    run later, nothing worse). A cache folder that cannot be written only loses the tally."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"{n}\n", encoding="ascii")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        log.warning("could not record the characters indexed without the indexes in %s: %s", path, e)


def prepare(store: Store, lemmas: bool = True) -> None:
    """Build (or open) the evidence index, and the lemma index when ``lemmas``, now: for a
    process that will look up many senses (a service, a batch, an evaluation). A large store's
    indexes are otherwise used only once some process has built them."""
    evidence_index(store, build=True)
    if lemmas:
        lemma_index(store, build=True)


__all__ = ["EVIDENCE_INDEX", "FORMAT", "LEMMA_FIELDS", "LEMMA_INDEX", "SMALL_KEYS",
           "EvidenceIndex", "LemmaIndex", "evidence_index", "is_small", "lemma_index", "lemma_key", "prepare", "rows_in",
           "worth_building"]
