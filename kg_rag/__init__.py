"""kg-rag: knowledge-graph-native retrieval with explainable word-sense selection."""

from __future__ import annotations

from .errors import (
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
from .settings import Settings, load_settings
from .store import EmbeddedStore, RemoteStore, Store, open_store

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
