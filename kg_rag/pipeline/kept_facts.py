"""Facts of the loaded vocabularies, kept between processes.

Some facts about a concept or sense IRI come from the vocabularies alone and are asked for again
by every new process:

* ``origins`` — where a candidate comes from: its source graph and scheme
  (:mod:`kg_rag.annotate.schemes`, ``select-concept-schemes``). An English word has dozens of
  candidate IRIs, the query costs ~80 µs an IRI, and a process meets most of them only once:
  ~20 % of ``kg-rag index`` on the bench's OEWN + OMW store (bench/ANALYSIS.md);
* ``labels`` — a concept's display labels (:func:`kg_rag.pipeline.retrieve.concept_labels`);
* ``neighbours`` — its thesaurus and wordnet neighbours (:func:`kg_rag.pipeline.retrieve.neighbours`);
* ``vectors`` (in the shared table, :func:`shared_facts`) — an English sense's contextual vector
  (:mod:`kg_rag.senses.knowledge.contextual`; the key hashes the recipe and the texts it is made
  of, so it outlives a load; the value is half-precision base64, or null), a few milliseconds of
  the encoder each;
* ``sentences`` (shared too) — a sense-only reading's sentence vector ("labels. definitions",
  :meth:`~kg_rag.senses.knowledge.contextual.ContextualSenses.bridge_cosines`), keyed the same way;
* ``readings`` — the candidate readings of an owner the lemma index does not hold (a thesaurus
  concept matched by its label; :func:`kg_rag.annotate.candidates.kept_readings`), by language.

The last two are a third of a new process's first questions at 10,000 documents (bench/ANALYSIS.md).
Each fact is kept, once some process has asked for it, in one SQLite table of the cache folder
named by the catalog version (:func:`kg_rag.derived.catalog_version`) — a load, a drop or an
alignment review starts a new table, never a stale answer. Unlike the lemma and evidence
indexes (:mod:`.evidence_index`) it is not built whole (every typed node of OEWN and three OMWs
is over a million rows, a warm-up of ~20 s that a short run never earns back): it fills as
processes ask, and a process asks the store only for the IRIs no earlier process asked for.

Only an embedded store on disk with vocabularies that are not small keeps one (another process
may change a remote store; an in-memory store lives one process; a small one answers in
milliseconds). The table is a cache: a failure to open or write it is a warning and the store is
asked as before; a forked process (``index --workers``) reads it and does not write: what it
would keep waits (:meth:`KeptFacts.pending`) until its parent takes it with the worker's answer
and keeps it (:mod:`kg_rag.pipeline.parallel`), so one writer keeps what every worker found.
Values are JSON: lists come back as lists.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

from kg_rag.derived import Derived, Slot
from kg_rag.pipeline.evidence_index import is_small, rows_in
from kg_rag.store import Store

log = logging.getLogger(__name__)

#: bumped when the table or what a kind holds changes (2: a sense-only reading's labels are its
#: entry's written forms; 1 kept none for it)
FORMAT = "facts-2"
#: the kinds of fact kept
Kind = Literal["origins", "labels", "neighbours", "vectors", "sentences", "readings"]
_CREATE = ("CREATE TABLE IF NOT EXISTS facts "
           "(kind TEXT, iri TEXT, value TEXT, PRIMARY KEY (kind, iri)) WITHOUT ROWID")
_MANY = "SELECT iri, value FROM facts WHERE kind = ? AND iri IN ({})"
_INSERT = "INSERT OR IGNORE INTO facts (kind, iri, value) VALUES (?, ?, ?)"


#: how long a statement waits for another process's write before it gives up (this time only)
BUSY_TIMEOUT = 2.0


def _busy(e: Exception) -> bool:
    """Another process holds the file's write lock: a passing state, not a broken cache."""
    return isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e))


class KeptFacts:
    """(kind, IRI) → a JSON value in one SQLite file; safe across threads; a forked process
    opens the file again and only reads it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._maker = os.getpid()    # a forked copy of this object only reads
        self._pid = os.getpid()      # the process of the open connection
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False         # the file cannot be opened or read: the store is asked
        self._read_only = False      # a write failed: this process keeps nothing more
        self._pending: dict[str, dict[str, Any]] = {}   # a forked process's, for its parent

    def _conn(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is None or self._pid != os.getpid():
            db = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, check_same_thread=False)
                # a cache: a write may be lost with the machine, never the file (no fsync per write)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(_CREATE)
                db.commit()
            except (OSError, sqlite3.Error) as e:
                if db is not None:
                    db.close()
                if _busy(e):   # tried again at the next call
                    log.debug("vocabulary facts in %s busy (%s): asking the store this time", self.path, e)
                    return None
                log.warning("not keeping vocabulary facts in %s (%s): asking the store", self.path, e)
                self._broken = True
                return None
            self._db, self._pid = db, os.getpid()
        return self._db

    def get_many(self, kind: Kind, iris: Sequence[str]) -> dict[str, Any]:
        """The kept ``kind`` facts of those ``iris`` some process asked for before."""
        out: dict[str, Any] = {}
        if not iris:
            return out
        with self._lock:
            db = self._conn()
            if db is None:
                return out
            try:
                for iri, value in rows_in(db, _MANY, iris, before=(kind,)):
                    out[iri] = json.loads(value)
            except (sqlite3.Error, ValueError) as e:
                if _busy(e):   # what was read is right; the rest is asked of the store
                    log.debug("vocabulary facts in %s busy (%s)", self.path, e)
                    return out
                # said once: the store is asked from now on
                log.warning("could not read the vocabulary facts in %s (%s)", self.path, e)
                self._broken = True
                return {}
        return out

    def put_many(self, kind: Kind, found: Mapping[str, Any]) -> None:
        """Keep ``found`` (in a forked process: pending, for its parent; a file another process
        is writing: not this time; a read-only file: nothing more)."""
        if not found or self._read_only:
            return
        if os.getpid() != self._maker:
            with self._lock:
                self._pending.setdefault(kind, {}).update(found)
            return
        with self._lock:
            db = self._conn()
            if db is None:
                return
            try:
                with db:
                    db.executemany(_INSERT, ((kind, iri, json.dumps(v, ensure_ascii=False))
                                             for iri, v in found.items()))
            except sqlite3.Error as e:
                if _busy(e):   # another process is writing: kept by a later call, or by it
                    log.debug("vocabulary facts in %s busy (%s): not kept this time", self.path, e)
                    return
                # said once: nothing more is kept by this process
                log.warning("could not keep vocabulary facts in %s (%s)", self.path, e)
                self._read_only = True


    def pending(self) -> dict[str, dict[str, Any]]:
        """What this forked process found to keep since the last call (taken: emptied), by kind."""
        with self._lock:
            out, self._pending = self._pending, {}
        return out

    def keep_pending(self, pending: Mapping[str, Mapping[str, Any]]) -> None:
        """Keep what a forked worker found (:meth:`pending`), here in its parent."""
        for kind, found in pending.items():
            self.put_many(cast(Kind, kind), found)


KEPT_FACTS: Slot[KeptFacts | None] = Slot("kept-facts")
SHARED_FACTS: Slot[KeptFacts | None] = Slot("shared-facts")
#: the shared table's file (bumped when what a kind holds changes)
SHARED_FORMAT = "shared-facts-1"


def kept_facts(store: Store) -> KeptFacts | None:
    """The facts table of ``store``'s catalog version, or None for a store that keeps none:
    remote, in memory, or small (:func:`~kg_rag.pipeline.evidence_index.is_small`: a few
    thousand concepts are asked for in milliseconds, and a test or a demo store would leave a
    file behind for nothing)."""
    if store.kind != "embedded" or store.location == ":memory:" or is_small(store):
        return None
    derived = Derived.of(store)

    return derived.value(KEPT_FACTS, lambda: KeptFacts(
        derived.cache_file(FORMAT, ".sqlite")))


def shared_facts(store: Store) -> KeptFacts | None:
    """The table of facts that are a function of their key alone — the key hashes everything
    the value depends on (a sense vector: its recipe, lemma, definitions and examples) — kept
    across catalog versions and stores in one file of the cache folder, so a load (a new catalog
    version) or another store with the same dictionary does not make them again. A remote store
    has one too (what another process writes there cannot make such a fact stale); an in-memory
    or small store has none (a test or a demo would leave a file behind for nothing)."""
    if (store.kind == "embedded" and store.location == ":memory:") or is_small(store):
        return None
    derived = Derived.of(store)
    return derived.value(SHARED_FACTS, lambda: KeptFacts(derived.cache_dir / f"{SHARED_FORMAT}.sqlite"))


def kept_tables(store: Store) -> dict[str, KeptFacts]:
    """Every table ``store`` keeps facts in, by name (a forked worker hands back each one's
    :meth:`KeptFacts.pending`)."""
    tables = {"facts": kept_facts(store), "shared": shared_facts(store)}
    return {name: t for name, t in tables.items() if t is not None}


__all__ = ["FORMAT", "KEPT_FACTS", "SHARED_FACTS", "SHARED_FORMAT", "Kind", "KeptFacts", "kept_facts",
           "kept_tables", "shared_facts"]
