"""kg-rag: knowledge-graph-native retrieval with explainable word-sense selection.

The public API: :class:`KnowledgeGraph` (the façade over the pipeline), its result types
(:class:`Answer`, :class:`Result`, :class:`MentionReport`, :class:`LanguageGuess`, :class:`Explanation`,
:class:`IndexReport`), :class:`WsdMode`, the settings, the store interface and the errors of
:mod:`kg_rag.errors`. Everything else is internal. The heavy names are imported on first use,
so ``import kg_rag`` stays cheap.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

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
from kg_rag.senses.mode import WsdMode
from kg_rag.settings import Settings, load_settings

if TYPE_CHECKING:
    from kg_rag.api import KnowledgeGraph
    from kg_rag.explain.question import Explanation
    from kg_rag.model import Answer, LanguageGuess, MentionReport, Result
    from kg_rag.pipeline.index import IndexReport
    from kg_rag.store import Store, open_store

try:
    __version__ = version("kg-rag")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

#: public name → the module that defines it (imported on first access)
_LAZY = {
    "KnowledgeGraph": "kg_rag.api",
    "Answer": "kg_rag.model",
    "LanguageGuess": "kg_rag.model",
    "Result": "kg_rag.model",
    "MentionReport": "kg_rag.model",
    "Explanation": "kg_rag.explain.question",
    "IndexReport": "kg_rag.pipeline.index",
    "Store": "kg_rag.store",
    "open_store": "kg_rag.store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kg_rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "Answer",
    "ConfigError",
    "Explanation",
    "IndexReport",
    "InputError",
    "KgRagError",
    "KnowledgeGraph",
    "LanguageGuess",
    "LoadError",
    "MentionReport",
    "NotFoundError",
    "QueryError",
    "RateLimitedError",
    "Result",
    "SelectionError",
    "Settings",
    "Store",
    "StoreError",
    "StoreLockedError",
    "WsdMode",
    "__version__",
    "load_settings",
    "open_store",
]
