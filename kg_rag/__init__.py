"""kg-rag: knowledge-graph-native retrieval with explainable word-sense selection."""

from __future__ import annotations

from kg_rag.errors import (
    ConfigError,
    InputError,
    KgRagError,
    LoadError,
    NotFoundError,
    QueryError,
    RateLimitedError,
    SelectionError,
    StoreError,
    StoreLockedError,
)
from kg_rag.settings import Settings, load_settings
from kg_rag.store import EmbeddedStore, RemoteStore, Store, open_store

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "EmbeddedStore",
    "InputError",
    "KgRagError",
    "LoadError",
    "NotFoundError",
    "QueryError",
    "RateLimitedError",
    "RemoteStore",
    "SelectionError",
    "Settings",
    "Store",
    "StoreError",
    "StoreLockedError",
    "__version__",
    "load_settings",
    "open_store",
]
