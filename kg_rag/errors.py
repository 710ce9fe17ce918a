"""The one exception hierarchy of kg-rag.

::

    KgRagError                     anything kg-rag raises on purpose; message says what to do
    ├── ConfigError                settings missing or invalid (e.g. no LLM API key)
    ├── InputError                 bad user input: question, language code, document, file
    │   └── LoadError              a source file could not be loaded (names file and line)
    ├── QueryError                 a query file is missing/broken or was called with wrong inputs
    ├── StoreError                 the store failed or answered partially (never an empty result)
    │   └── StoreLockedError       the embedded store is owned by another process
    ├── SelectionError             a sense selector could not decide
    │   └── RateLimitedError       the LLM provider asked us to wait (has ``retry_after``)
    └── NotFoundError              an IRI or document id that is not in the store

The CLI maps these to exit codes (``exit_code``), the service to RFC 7807 problem+json
(``http_status``).
"""

from __future__ import annotations


class KgRagError(Exception):
    """Base class. ``str(err)`` is a one-line message meant for the user."""

    exit_code = 1
    http_status = 500
    title = "kg-rag error"

    def __str__(self) -> str:  # one line, always
        return " ".join(super().__str__().split())


class ConfigError(KgRagError):
    exit_code = 3
    http_status = 503  # the server cannot do this as configured (e.g. no LLM key); not a crash
    title = "configuration error"


class InputError(KgRagError):
    exit_code = 2
    http_status = 400
    title = "bad input"


class LoadError(InputError):
    title = "cannot load source"


class QueryError(KgRagError):
    exit_code = 4
    http_status = 400
    title = "bad query"


class StoreError(KgRagError):
    exit_code = 5
    http_status = 503
    title = "store error"


class StoreLockedError(StoreError):
    title = "store in use"


class SelectionError(KgRagError):
    exit_code = 6
    http_status = 502
    title = "sense selection failed"


class RateLimitedError(SelectionError):
    http_status = 429
    title = "rate limited"

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotFoundError(KgRagError):
    exit_code = 7
    http_status = 404
    title = "not found"


__all__ = [
    "ConfigError",
    "InputError",
    "KgRagError",
    "LoadError",
    "NotFoundError",
    "QueryError",
    "RateLimitedError",
    "SelectionError",
    "StoreError",
    "StoreLockedError",
]
