"""Indexing with several processes (``kg-rag index --workers N``): N forked workers read,
annotate and decide documents; this process alone writes.

The embedded store takes one writer process, and a forked child that reads a store its parent
goes on writing could meet files the parent's compaction has removed — so the work goes in
*generations*: the parent forks N workers (they inherit the store, the annotator's lexicon and
the selector's knowledge base, warmed up first, without loading anything again), they decide up
to :data:`PER_WORKER` documents each against the store as it is, the
parent writes their changes in document order and only then forks the next generation. Nothing
is written while a worker reads.

The result is what :func:`~kg_rag.pipeline.index.index_documents` writes, decision for decision:
a document that the serial run would decide only after the pending changes are written — the
same document id again, or a passage whose decision an earlier document of the generation makes
(it would reuse that decision) — is decided again here, in order, after they are written; its
worker's answer is dropped. A document that fails in a worker fails the run as it would in the
serial one (the generations before it are written). Progress within a document (``detail``) is
not reported from the workers.
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from collections.abc import Callable, Sequence

from kg_rag.annotate import Annotator
from kg_rag.documents import SourceDocument
from kg_rag.errors import InputError
from kg_rag.pipeline.index import (
    WRITE_BATCH,
    IndexReport,
    Tally,
    Writer,
    check_documents,
    contexts_of,
    document_change,
    document_units,
)
from kg_rag.senses.base import SenseSelector
from kg_rag.store import Change, Store

log = logging.getLogger(__name__)

#: documents a worker decides per generation: a worker's caches (evidence words, signatures)
#: die with it, so a generation should be long; its changes wait in memory until it ends
#: (measured on en-sense-dev, 135 sentences, 2 workers: 32 per worker 10.4–12.4 s, 128 9.4 s;
#: serial 10.4–11.5 s on a machine with one core busy elsewhere)
PER_WORKER = 4 * WRITE_BATCH

#: what a worker inherits (set in the parent just before it forks a generation)
_STATE: tuple[Store, Annotator, SenseSelector | None] | None = None

Built = tuple[Change, Tally, set[str]]


def _build(doc: SourceDocument) -> Built:
    """In a worker: the document's change, its figures and its passages' context hashes."""
    assert _STATE is not None
    store, annotator, selector = _STATE
    units, langs = document_units(doc, annotator)
    change, outcome = document_change(store, doc, units, langs, selector)
    return change, Tally.of(outcome, langs, len(units)), contexts_of(units)


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
    global _STATE
    if workers < 1:
        raise InputError(f"--workers must be 1 or more, not {workers}")
    t0 = time.perf_counter()
    check_documents(docs)
    warm(annotator, selector)
    ctx = multiprocessing.get_context("fork")
    tally = Tally()
    writer = Writer(store, progress)
    for gen in generations(docs, workers * PER_WORKER):
        _STATE = (store, annotator, selector)
        try:
            with ctx.Pool(min(workers, len(gen))) as pool:
                built = pool.map(_build, gen, chunksize=max(1, len(gen) // (4 * workers)))
        finally:
            _STATE = None
        ids: set[str] = set()          # of this generation's documents so far (written or pending)
        seen: set[str] = set()         # their passages' context hashes
        for doc, (change, counts, contexts) in zip(gen, built, strict=True):
            if doc.id in ids or not seen.isdisjoint(contexts):
                writer.flush()       # the serial run decides this one after they are written
                units, langs = document_units(doc, annotator)
                change, outcome = document_change(store, doc, units, langs, selector)
                counts, contexts = Tally.of(outcome, langs, len(units)), contexts_of(units)
            ids.add(doc.id)
            seen.update(contexts)
            writer.add(doc, contexts, change)
            tally.add(counts)
        writer.flush()
    log.info("indexed %d documents with %d workers", len(docs), workers)
    return tally.report(len(docs), time.perf_counter() - t0)


__all__ = ["generations", "index_parallel", "warm"]
