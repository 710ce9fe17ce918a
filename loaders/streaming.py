"""A large new source written while it is mapped: the mapper (a thread) writes N-Triples into a
pipe, the store's bulk loader reads them as they come.

Mapping a WordNet (expat callbacks in Python) costs about as much as the engine's bulk load of
its triples; one after the other they cost the sum, overlapped about the larger of the two (the
engine's loader runs outside the interpreter lock). Used only for a graph the store does not
hold yet: if the source turns out malformed half way, the graph is dropped again, so the store
is left as it was — as when a source is mapped completely first, which is still how a loaded
source is replaced (its old triples stay until the new ones are known to be good).
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from pyoxigraph import NamedNode

from kg_rag.store import Store
from loaders.common import Parsed


def stream_into(store: Store, graph: NamedNode, path: Path,
                mapper: Callable[[Path, Callable[[int], None] | None, TextIO], Parsed],
                progress: Callable[[int], None] | None = None) -> Parsed:
    """Map ``path`` with ``mapper(path, progress, stream)`` in a thread while ``store`` loads
    what it writes into ``graph``; returns the mapper's result (its ``triples`` were loaded).

    The mapper's error (a malformed source) or the store's is raised after the graph is dropped.
    The thread runs in a copy of this context (the load's limits)."""
    read_fd, write_fd = os.pipe()
    result: list[Parsed] = []
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            with open(write_fd, "w", encoding="utf-8", buffering=1 << 20) as out:
                result.append(mapper(path, progress, out))
        except BrokenPipeError:
            pass  # the store stopped reading: its own error is raised
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failure.append(e)

    worker = threading.Thread(target=contextvars.copy_context().run, args=(produce,),
                              name="kg-rag-map", daemon=True)
    worker.start()
    try:
        with open(read_fd, "rb", buffering=1 << 20) as inp:
            store.load_ntriples_stream(graph, inp)
    except BaseException:
        worker.join()
        _drop(store, graph)
        raise
    worker.join()
    if failure or not result:
        _drop(store, graph)
        raise failure[0] if failure else RuntimeError(f"mapping {path} ended without a result")
    return result[0]


def _drop(store: Store, graph: NamedNode) -> None:
    if graph in store.named_graphs():
        store.drop_graph(graph)


__all__ = ["stream_into"]
