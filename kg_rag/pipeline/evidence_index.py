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

from kg_rag.derived import Derived, Slot
from kg_rag.store import Store

log = logging.getLogger(__name__)

#: the layout of the files (bump when a table or a record changes)
FORMAT = "evx-1"
#: tables with fewer rows stay in memory (built in milliseconds)
DISK_MIN_ROWS = 20_000
#: IRIs per ``IN (…)`` of one SQLite query (its default limit of variables is 32,766)
_CHUNK = 500


class _Table:
    """One read-only key → JSON record table in a SQLite database, safe across threads."""

    def __init__(self, db: sqlite3.Connection, name: str) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._one = f"SELECT rec FROM {name} WHERE k = ?"      # structure only: the key is bound
        self._many = f"SELECT k, rec FROM {name} WHERE k IN ({{}})"

    def get(self, key: str) -> object | None:
        with self._lock:
            row = self._db.execute(self._one, (key,)).fetchone()
        return json.loads(row[0]) if row is not None else None

    def get_many(self, keys: Sequence[str]) -> dict[str, object]:
        out: dict[str, object] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                q = self._many.format(",".join("?" * len(chunk)))
                for k, rec in self._db.execute(q, tuple(chunk)):
                    out[k] = json.loads(rec)
        return out


def _new_db(records: Iterable[tuple[str, str]], name: str) -> tuple[sqlite3.Connection, int]:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute(f"CREATE TABLE {name} (k TEXT PRIMARY KEY, rec TEXT NOT NULL) WITHOUT ROWID")
    db.executemany(f"INSERT INTO {name} (k, rec) VALUES (?, ?)", records)
    db.commit()
    n = db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
    return db, int(n)


def _open_or_build(derived: Derived, prefix: str, name: str,
                   build: Callable[[], Iterable[tuple[str, str]]]) -> sqlite3.Connection:
    """The table's database: the disk file of this catalog version, else built (and written to
    disk when large)."""
    path = derived.cache_dir / f"{prefix}-{FORMAT}-{derived.version()}.sqlite"
    if path.is_file():
        try:
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            db.execute(f"SELECT count(*) FROM {name}").fetchone()
            log.info("%s read from %s", name, path)
            return db
        except sqlite3.Error as e:
            log.warning("ignoring the unreadable cache %s (%s); rebuilding it", path, e)
    t0 = time.perf_counter()
    db, n = _new_db(build(), name)
    log.info("%s: %d records built in %.1fs", name, n, time.perf_counter() - t0)
    if n >= DISK_MIN_ROWS:
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
    return db


# --- evidence -------------------------------------------------------------------------------

class EvidenceIndex:
    """Sense IRI → sense-level evidence record, concept IRI → concept-level evidence record
    (records as :mod:`kg_rag.pipeline.evidence` encodes them)."""

    def __init__(self, senses: _Table, concepts: _Table) -> None:
        self.senses = senses
        self.concepts = concepts


def _evidence_records(store: Store, query: str, var: str, encode: Callable[[object], str],
                      extra: Sequence[str] = ()) -> Iterable[tuple[str, str]]:
    from kg_rag.pipeline.evidence import _add, _Parts

    parts: dict[str, _Parts] = {}
    for q in (query, *extra):
        for r in store.select(q):
            iri = r[var].value
            p = parts.get(iri)
            if p is None:
                p = parts[iri] = _Parts.new()
            _add(p, r["kind"].value, r["text"])
    return ((iri, encode(p)) for iri, p in parts.items())


def _build_evidence(store: Store, derived: Derived) -> EvidenceIndex:
    from kg_rag.pipeline.evidence import encode_concept, encode_sense

    sdb = _open_or_build(derived, "evidence-senses", "sense",
                         lambda: _evidence_records(store, "select-sense-evidence", "sense",
                                                   encode_sense))
    cdb = _open_or_build(derived, "evidence-concepts", "concept",
                         lambda: _evidence_records(store, "select-concept-evidence", "concept",
                                                   encode_concept, ("select-concept-hierarchy",)))
    return EvidenceIndex(_Table(sdb, "sense"), _Table(cdb, "concept"))


#: the evidence index, in the store's registry
EVIDENCE_INDEX: Slot[EvidenceIndex] = Slot("evidence-index")


def evidence_index(store: Store) -> EvidenceIndex | None:
    """The evidence index of an embedded ``store`` (built on first use); None for other stores."""
    if store.kind != "embedded":
        return None
    derived = Derived.of(store)
    return derived.value(EVIDENCE_INDEX, lambda: _build_evidence(store, derived))


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


LEMMA_INDEX: Slot[LemmaIndex] = Slot("lemma-index")


def lemma_index(store: Store) -> LemmaIndex | None:
    """The lemma index of an embedded ``store`` (built on first use); None for other stores."""
    if store.kind != "embedded":
        return None
    derived = Derived.of(store)
    return derived.value(LEMMA_INDEX, lambda: LemmaIndex(_Table(
        _open_or_build(derived, "lemmas", "lemma", lambda: _lemma_records(store)), "lemma")))


__all__ = ["DISK_MIN_ROWS", "EVIDENCE_INDEX", "FORMAT", "LEMMA_FIELDS", "LEMMA_INDEX",
           "EvidenceIndex", "LemmaIndex", "evidence_index", "lemma_index",
           "lemma_key"]
