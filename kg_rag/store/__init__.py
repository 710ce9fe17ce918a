"""Stores: one interface (:class:`Store`), embedded Oxigraph or a remote SPARQL 1.1 endpoint."""

from __future__ import annotations

import logging
from pathlib import Path

from kg_rag.errors import StoreError, StoreLockedError
from kg_rag.settings import Settings, settings
from kg_rag.store.base import Change, EngineHandler, Row, Store
from kg_rag.store.dialect import by_name
from kg_rag.store.embedded import EmbeddedStore
from kg_rag.store.remote import RemoteStore
from kg_rag.store.render import Values
from kg_rag.store.serving import ServedStore, Serving, served_by

log = logging.getLogger(__name__)


def open_store(path: str | None = None, endpoint: str | None = None,
               update_endpoint: str | None = None, config: Settings | None = None,
               read_only: bool = False, token: str | None = None, create: bool = True) -> Store:
    """Open the store named by arguments, else by settings (``KG_RAG_ENDPOINT``/``KG_RAG_STORE``);
    ``read_only``: no write of any kind (the embedded engine itself opens read-only); ``token``
    (else ``KG_RAG_SERVICE_TOKEN``): a remote endpoint's Bearer token (a kg-rag service's);
    ``create=False``: an embedded store folder that does not exist is a StoreError, not a new
    empty store (a command that only reads, given a mistyped path). An embedded store that a
    running ``kg-rag serve`` holds is worked on through the service, never opened beside it
    (:class:`~kg_rag.store.serving.ServedStore`; with ``create``, a command that writes, one
    served read-only is refused at once)."""
    cfg = config or settings()
    endpoint = endpoint or (None if path else cfg.endpoint)
    if endpoint:
        return RemoteStore(endpoint, update_endpoint or cfg.update_endpoint,
                           cfg.store_endpoint, timeout=cfg.remote_timeout, read_only=read_only,
                           token=token or cfg.service_token,
                           dialect=by_name(cfg.endpoint_dialect))
    where = path or cfg.store
    if not create and where and where != ":memory:" and not Path(where).exists():
        raise StoreError(f"no store at {where}: `kg-rag load FILE…` or `kg-rag demo` makes one "
                         f"(or give --store the store you built)")
    serving = served_by(where) if where and where != ":memory:" else None
    if serving is not None:
        # a running kg-rag serve holds the store: the engine is not opened beside it. A store
        # served read-only has no lock that would refuse this process, and one served writable
        # none that refuses a read-only open; either way the other process would read a store
        # that this one writes (undefined behaviour). A command that makes a store (load, demo,
        # index, a writable serve) writes: on a store served read-only it is refused now
        return _through(where, serving, cfg, read_only, token, create)
    try:
        return EmbeddedStore(where, read_only=read_only)
    except StoreLockedError as e:
        serving = served_by(where) if where and where != ":memory:" else None
        if serving is None:
            raise
        try:
            return _through(where, serving, cfg, read_only, token)
        except StoreError:
            raise e from None


def _through(where: str, serving: Serving, cfg: Settings, read_only: bool,
             token: str | None, create: bool = False) -> ServedStore:
    """The store a kg-rag service holds, read (and, with its token, written) through it;
    ``create`` (a command that writes): refused here when it is served read-only."""
    store = ServedStore(where, serving, timeout=cfg.remote_timeout, read_only=read_only,
                        token=token or cfg.service_token)
    if create:
        store.check_writable()
    log.warning("the store at %s is served by kg-rag serve (pid %d): working through its "
                "endpoint %s%s", where, serving.pid, serving.endpoint,
                " (served read-only: reads only)" if serving.read_only else
                "" if serving.updates else " (it takes no updates: reads only)")
    return store


def check_not_empty(store: Store) -> None:
    """StoreError when no vocabulary is loaded (the catalog lists no source): questions then
    find no concept because there is none, not because of their words."""
    from kg_rag.errors import StoreError

    if not store.ask("ask-store-has-sources"):
        where = f" at {store.location}" if store.location else ""
        rows = store.select("select-document-count")
        docs = int(rows[0]["n"].value) if rows and "n" in rows[0] else 0
        if docs:   # every source dropped: the documents are there, the words to find them not
            raise StoreError(f"the store{where} holds {docs} indexed document(s) but no "
                             f"vocabulary (`kg-rag sources` lists none): load the thesauri and "
                             f"dictionaries they were indexed with")
        raise StoreError(f"the store{where} is empty: run `kg-rag demo` or `kg-rag load "
                         f"FILE…` first (or give --store the store you built)")


__all__ = ["Change", "check_not_empty", "EmbeddedStore", "EngineHandler", "RemoteStore", "Row", "Store", "Values", "open_store"]
