"""Stores: one interface (:class:`Store`), embedded Oxigraph or a remote SPARQL 1.1 endpoint."""

from __future__ import annotations

from kg_rag.settings import Settings, settings
from kg_rag.store.base import Change, EngineHandler, Row, Store
from kg_rag.store.dialect import by_name
from kg_rag.store.embedded import EmbeddedStore
from kg_rag.store.remote import RemoteStore
from kg_rag.store.render import Values


def open_store(path: str | None = None, endpoint: str | None = None,
               update_endpoint: str | None = None, config: Settings | None = None,
               read_only: bool = False) -> Store:
    """Open the store named by arguments, else by settings (``KG_RAG_ENDPOINT``/``KG_RAG_STORE``);
    ``read_only``: no write of any kind (the embedded engine itself opens read-only)."""
    cfg = config or settings()
    endpoint = endpoint or (None if path else cfg.endpoint)
    if endpoint:
        return RemoteStore(endpoint, update_endpoint or cfg.update_endpoint,
                           cfg.store_endpoint, timeout=cfg.remote_timeout, read_only=read_only,
                           dialect=by_name(cfg.endpoint_dialect))
    return EmbeddedStore(path or cfg.store, read_only=read_only)


def check_not_empty(store: Store) -> None:
    """StoreError when no vocabulary is loaded (the catalog lists no source): questions then
    find no concept because there is none, not because of their words."""
    from kg_rag.errors import StoreError

    if not store.ask("ask-store-has-sources"):
        where = f" at {store.location}" if store.location else ""
        raise StoreError(f"the store{where} is empty: run `kg-rag demo` or `kg-rag load "
                              f"FILE…` first (or give --store the store you built)")


__all__ = ["Change", "check_not_empty", "EmbeddedStore", "EngineHandler", "RemoteStore", "Row", "Store", "Values", "open_store"]
