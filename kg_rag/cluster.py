"""Indexing across machines on an existing distributed engine (Dask): ``kg-rag index
--executor dask://HOST:PORT`` and ``KnowledgeGraph.index(..., executor=…)``.

Indexing a document is idempotent (content-addressed IRIs: the same document, mentions and
decisions give the same quads), so a corpus is simply mapped over a Dask cluster in chunks: the
client reads the files, each task indexes one chunk into the shared SPARQL endpoint with a
knowledge graph kept per worker process (its lexicon and knowledge base built once per process,
re-checked against the endpoint's catalog like any remote store's), and the reports are summed.
A task that fails is retried by Dask; writing a chunk twice changes nothing. An embedded store
cannot be shared by processes, so the cluster needs ``--endpoint``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kg_rag.errors import ConfigError, InputError

if TYPE_CHECKING:
    from kg_rag.documents import SourceDocument
    from kg_rag.pipeline.index import IndexReport

SCHEME = "dask://"
#: documents per task: one update per 32 documents is what a single process writes too
CHUNK = 32

_KG: dict[tuple[str, str | None, str | None], Any] = {}
_KG_LOCK = threading.Lock()


def scheduler_address(executor: str) -> str:
    """``dask://HOST:PORT`` → ``tcp://HOST:PORT`` (InputError for anything else)."""
    if not executor.startswith(SCHEME) or not executor[len(SCHEME):].strip():
        raise InputError(f"--executor must be dask://HOST:PORT (a Dask scheduler), not {executor!r}")
    return "tcp://" + executor[len(SCHEME):]


def _worker_graph(endpoint: str, update_endpoint: str | None, token: str | None) -> Any:
    from kg_rag.api import KnowledgeGraph
    from kg_rag.store import RemoteStore

    key = (endpoint, update_endpoint, token)
    with _KG_LOCK:
        kg = _KG.get(key)
        if kg is None:
            kg = _KG[key] = KnowledgeGraph(RemoteStore(endpoint, update_endpoint, token=token))
        return kg


def index_chunk(endpoint: str, update_endpoint: str | None, token: str | None,
                docs: Sequence[SourceDocument], wsd: str | None) -> IndexReport:
    """One task: index ``docs`` into the endpoint from a worker process."""
    return _worker_graph(endpoint, update_endpoint, token).index_documents(docs, wsd=wsd)  # type: ignore[no-any-return]


def index_on_cluster(executor: str, endpoint: str, update_endpoint: str | None,
                     token: str | None, docs: Sequence[SourceDocument], wsd: str | None,
                     progress: Callable[[int], None] | None = None) -> IndexReport:
    """Index ``docs`` on the Dask cluster of ``executor`` into ``endpoint``; the summed report."""
    try:
        from distributed import Client, as_completed
    except ModuleNotFoundError:
        raise ConfigError("--executor dask:// needs Dask's distributed package: install the "
                          "'cluster' extra from the kg-rag source folder with "
                          "pip install '.[cluster]'") from None
    from kg_rag.pipeline.index import IndexReport

    address = scheduler_address(executor)
    t0 = time.perf_counter()
    chunks = [list(docs[i:i + CHUNK]) for i in range(0, len(docs), CHUNK)]
    try:
        client = Client(address, timeout=10)  # type: ignore[no-untyped-call]
    except OSError as e:
        raise ConfigError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    try:
        futures = {client.submit(index_chunk, endpoint, update_endpoint, token, c, wsd,
                                 pure=False, retries=2): len(c) for c in chunks}
        reports: list[IndexReport] = []
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            reports.append(fut.result())
            if progress is not None:
                progress(futures[fut])
    finally:
        client.close()  # type: ignore[no-untyped-call]
    langs: dict[str, int] = {}
    for r in reports:
        for k, v in r.languages.items():
            langs[k] = langs.get(k, 0) + v
    total = IndexReport(0, 0, 0, 0, 0, 0, langs, 0.0)
    for r in reports:
        total = replace(total, documents=total.documents + r.documents,
                        passages=total.passages + r.passages, mentions=total.mentions + r.mentions,
                        ambiguous=total.ambiguous + r.ambiguous, decided=total.decided + r.decided,
                        reused=total.reused + r.reused, llm_calls=total.llm_calls + r.llm_calls)
    return replace(total, seconds=time.perf_counter() - t0)
