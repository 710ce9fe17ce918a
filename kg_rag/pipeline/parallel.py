"""Indexing with several processes (``kg-rag index --workers N``): N forked workers read,
annotate and decide documents; this process alone writes.

The workers are forked after the parent has warmed the annotator's lexicon and the selector's
knowledge base, so they share them instead of loading them. They must never read a store their
parent is writing — a forked copy of the embedded engine would meet files the parent's compaction
has removed, and opening it read-only while it is written is undefined — so they read a snapshot:

* **on-disk embedded store**: the engine's backup of the store at the start of the run (hard
  links, cheap), opened read-only in each worker. The workers live for the whole run (their
  caches too), documents stream to them and their changes back, and the parent writes while they
  decide;
* **in-memory store** (no backup possible) and **remote store**: *generations* — the parent forks
  N workers, each decides up to :data:`PER_WORKER` documents against the store as it is, the
  parent writes their changes and only then forks the next generation; nothing is written while
  a worker reads.

The result is what :func:`~kg_rag.pipeline.index.index_documents` writes, decision for decision:
a document that the serial run would decide only after earlier ones are written — the same
document id again, or a passage whose decision an earlier document of the snapshot's (or the
generation's) documents makes (it would reuse that decision) — is decided again here, in order,
after they are written; its worker's answer is dropped. A document that fails in a worker fails
the run as it would in the serial one (what came before it is written). Progress within a
document (``detail``) is not reported from the workers. A long document (more than
:data:`~kg_rag.pipeline.index.SECTION_CHARS` characters) is indexed in sections by this process
when its turn comes (:func:`~kg_rag.pipeline.index.index_in_sections`): a worker would hold it
whole, and send all of its quads back.
"""

from __future__ import annotations

import logging
import multiprocessing
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from kg_rag.annotate import Annotator
from kg_rag.documents import SourceDocument
from kg_rag.errors import InputError, KgRagError
from kg_rag.pipeline.index import (
    WRITE_BATCH,
    IndexReport,
    Passage,
    Tally,
    Writer,
    build_document,
    check_documents,
    document_sections,
    index_in_sections,
)
from kg_rag.pipeline.kept_facts import kept_tables
from kg_rag.senses.base import SenseSelector
from kg_rag.store import Change, EmbeddedStore, Store

log = logging.getLogger(__name__)

#: documents a worker decides per generation: a worker's caches (evidence words, signatures)
#: die with it, so a generation should be long; its changes wait in memory until it ends
#: (measured on en-sense-dev, 135 sentences, 2 workers: 32 per worker 10.4–12.4 s, 128 9.4 s;
#: serial 10.4–11.5 s on a machine with one core busy elsewhere)
PER_WORKER = 4 * WRITE_BATCH

#: what a worker inherits (set in the parent just before it forks a generation)
_STATE: tuple[Store, Annotator, SenseSelector | None] | None = None

Built = tuple[Change, Tally, set[str]]
#: a long document's sections (its passages, languages detected), which the parent indexes
Sections = list[list[Passage]]


#: what a worker found to keep, by table and kind (:meth:`KeptFacts.pending`)
Pending = dict[str, dict[str, dict[str, Any]]]


def _build(doc: SourceDocument) -> tuple[Built | Sections, Pending]:
    """In a worker: the document's change, its figures and its passages' context hashes; for a
    long document its sections, which the parent indexes (without detecting their languages
    again). With it, the vocabulary facts the worker found, for the parent to keep."""
    assert _STATE is not None
    sections = document_sections(doc)
    out: Built | Sections = sections if len(sections) > 1 else build_document(
        _STATE[0], doc, _STATE[1], _STATE[2], sections[0])
    return out, {name: t.pending() for name, t in kept_tables(_STATE[0]).items()}


def _answers(store: Store, docs: Iterable[SourceDocument],
             results: Iterable[tuple[Built | Sections, Pending]]) -> Iterator[tuple[SourceDocument, Built | Sections]]:
    """Each document with its worker's answer; what the worker found to keep is kept here."""
    tables = kept_tables(store)
    for doc, (built, pending) in zip(docs, results, strict=True):
        for name, found in pending.items():
            if found and name in tables:
                tables[name].keep_pending(found)
        yield doc, built


def _read_snapshot(path: str) -> None:
    """A worker's start (snapshot mode): read the run's snapshot, not the writer's store."""
    assert _STATE is not None and isinstance(_STATE[0], EmbeddedStore)
    _STATE[0].read_snapshot(Path(path))


def generations(docs: Sequence[SourceDocument], size: int) -> list[list[SourceDocument]]:
    """``docs`` in runs of at most ``size``, in order."""
    return [list(docs[i : i + size]) for i in range(0, len(docs), size)]


def warm(annotator: Annotator, selector: SenseSelector | None) -> None:
    """Load what every worker needs before forking, so that they share it instead of each
    building it: the annotator's lexicon, the selector's knowledge base."""
    annotator.annotate("warming up", "en")
    warm_up = getattr(selector, "warm_up", None)
    if callable(warm_up):
        warm_up()


def index_parallel(store: Store, docs: Sequence[SourceDocument], annotator: Annotator,
                   selector: SenseSelector | None, workers: int,
                   progress: Callable[[int], None] | None = None) -> IndexReport:
    """Index ``docs`` with ``workers`` forked processes (module docstring)."""
    if workers < 1:
        raise InputError(f"--workers must be 1 or more, not {workers}")
    t0 = time.perf_counter()
    check_documents(docs)
    warm(annotator, selector)
    kept_tables(store)   # made here, before the fork: the workers' copies hand what they find back
    tally = Tally()
    writer = Writer(store, progress)
    folder = _snapshot(store)
    try:
        if folder is not None:
            _write(_streamed(store, annotator, selector, docs, workers, folder / "store"),
                   store, annotator, selector, writer, tally)
        else:
            for gen in generations(docs, workers * PER_WORKER):
                _write(_generation(store, annotator, selector, gen, workers),
                       store, annotator, selector, writer, tally)
        writer.flush()
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    log.info("indexed %d documents with %d workers", len(docs), workers)
    return tally.report(len(docs), time.perf_counter() - t0)


def _snapshot(store: Store) -> Path | None:
    """A folder holding a snapshot of ``store`` (as ``store/``), or None where none can be taken
    (in memory, remote; no room or no permission beside the store: generations instead)."""
    if not isinstance(store, EmbeddedStore) or store.location == ":memory:":
        return None
    try:
        folder = Path(tempfile.mkdtemp(prefix=".kg-rag-snapshot-", dir=Path(store.location).parent))
    except OSError as e:
        log.warning("no snapshot of the store for the workers (%s): indexing in generations", e)
        return None
    try:
        if store.snapshot(folder / "store"):
            return folder
    except KgRagError as e:
        log.warning("%s: indexing in generations", e)
    shutil.rmtree(folder, ignore_errors=True)
    return None


def _streamed(store: Store, annotator: Annotator, selector: SenseSelector | None,
              docs: Sequence[SourceDocument], workers: int,
              snapshot: Path) -> Iterator[tuple[SourceDocument, Built | Sections]]:
    """Each document and its worker's answer, in order, from workers that read ``snapshot``."""
    global _STATE
    _STATE = (store, annotator, selector)
    try:
        with ProcessPoolExecutor(min(workers, len(docs)), mp_context=multiprocessing.get_context("fork"),
                                 initializer=_read_snapshot, initargs=(str(snapshot),)) as pool:
            try:
                yield from _answers(store, docs, pool.map(_build, docs, chunksize=4))
            except BaseException:   # a failed document: the rest is not decided for nothing
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:
        _STATE = None


def _generation(store: Store, annotator: Annotator, selector: SenseSelector | None,
                gen: list[SourceDocument], workers: int) -> Iterator[tuple[SourceDocument, Built | Sections]]:
    """Each document of ``gen`` and its worker's answer, decided against the store as it is."""
    global _STATE
    _STATE = (store, annotator, selector)
    try:
        with ProcessPoolExecutor(min(workers, len(gen)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            built = list(pool.map(_build, gen, chunksize=max(1, len(gen) // (4 * workers))))
    finally:
        _STATE = None
    yield from _answers(store, gen, built)


def _write(answers: Iterable[tuple[SourceDocument, Built | Sections]], store: Store,
           annotator: Annotator, selector: SenseSelector | None, writer: Writer,
           tally: Tally) -> None:
    """Write the workers' answers in order; decide again here, after flushing, each document
    whose decisions depend on one the workers could not see written, and index each long one
    here in sections (module docstring)."""
    ids: set[str] = set()          # of the documents so far that the workers' store lacks
    seen: set[str] = set()         # their passages' context hashes
    for doc, built in answers:
        if isinstance(built, list):  # a long document: in sections, after what came before it
            writer.flush()
            counts, contexts = index_in_sections(store, doc, built, annotator, selector)
            ids.add(doc.id)
            seen.update(contexts)
            tally.add(counts)
            if writer.progress is not None:
                writer.progress(1)
            continue
        change, counts, contexts = built
        if doc.id in ids or not seen.isdisjoint(contexts):
            writer.flush()       # the serial run decides this one after they are written
            change, counts, contexts = build_document(store, doc, annotator, selector)
        ids.add(doc.id)
        seen.update(contexts)
        writer.add(doc, contexts, change)
        tally.add(counts)
    writer.flush()


__all__ = ["generations", "index_parallel", "warm"]
