"""What differs between the SPARQL engines behind a :class:`~kg_rag.store.remote.RemoteStore`.

A remote store asks its :class:`Dialect` — one object chosen per endpoint — wherever an engine may
deviate from SPARQL 1.1, and nowhere else does the pipeline know which engine it talks to:

- :meth:`Dialect.read_query`: the text of a read query as this engine must receive it;
- :meth:`Dialect.values_text`: bound values as query text (blocks rendered by
  :mod:`kg_rag.store.render`, the one place where terms become text);
- :meth:`Dialect.update_requests`, :meth:`Dialect.apply`: a :class:`~kg_rag.store.base.Change`
  as update requests, and what a failure of one of them means;
- :meth:`Dialect.term`: a term of an answer as SPARQL 1.1 would have given it;
- :attr:`Dialect.reserialise`: user queries' answers are parsed and written again by
  pyoxigraph (the engine's own serialisation differs from the standard's);
- :meth:`Dialect.store_endpoint`: where the Graph Store Protocol lives.

The standard dialect changes nothing. Engine dialects live in their own modules
(:mod:`kg_rag.store.virtuoso`). ``KG_RAG_ENDPOINT_DIALECT`` (``auto``, ``standard``,
``virtuoso``) chooses one; ``auto`` (the default) asks the endpoint once and reads its
``Server`` header.
"""

from __future__ import annotations

import http.client
import logging
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyoxigraph import Triple

from kg_rag.errors import ConfigError, StoreError
from kg_rag.store.render import Values, values_block

if TYPE_CHECKING:
    from kg_rag.store.base import Change

log = logging.getLogger(__name__)

NAMES = ("auto", "standard", "virtuoso")


class Dialect:
    """SPARQL 1.1 as written: no rewrite, no repair (``oxigraph serve``, Fuseki, GraphDB…)."""

    name = "standard"
    #: one update request is applied whole or not at all
    atomic = True
    #: answers to users' raw queries are parsed and serialised again by pyoxigraph
    reserialise = False

    def read_query(self, text: str) -> str:
        """The text of a read query (named or a user's) as the engine must receive it."""
        return text

    def values_text(self, values: Values | None) -> str:
        """The bound values as query text (a VALUES block, rendered by kg_rag.store.render)."""
        return values_block(values) if values is not None else ""

    def update_text(self, text: str) -> str:
        """The text of an update (kg-rag's or a user's) as the engine must receive it."""
        return text

    def update_requests(self, change: Change) -> list[str]:
        """The update requests that apply ``change``; one request keeps it atomic."""
        return [change.render()]

    def apply(self, execute: Callable[[str], None], change: Change) -> None:
        """Apply ``change`` through ``execute`` (the store's update call), request by request."""
        for text in self.update_requests(change):
            execute(text)

    def visible(self, row: dict[str, Any]) -> bool:
        """False for a row of the engine's own bookkeeping (system graphs), never kg-rag data."""
        return True

    def visible_triple(self, triple: Triple) -> bool:
        """False for a triple of the engine's own bookkeeping."""
        return True

    def term(self, value: Any) -> Any:
        """A term of an answer (pyoxigraph object) as SPARQL 1.1 would have given it."""
        return value

    def store_endpoint(self, endpoint: str) -> str | None:
        """The Graph Store Protocol URL for ``endpoint`` (None: the store's own default)."""
        return None

    def __repr__(self) -> str:
        return f"<{self.name} SPARQL dialect>"


STANDARD = Dialect()


def by_name(name: str) -> Dialect | None:
    """The dialect called ``name``; None for ``auto`` (ask the endpoint); ConfigError otherwise."""
    key = name.strip().lower()
    if key == "auto":
        return None
    if key == "standard":
        return STANDARD
    if key == "virtuoso":
        from kg_rag.store.virtuoso import VirtuosoDialect

        return VirtuosoDialect()
    raise ConfigError(f"unknown SPARQL dialect {name!r}: use one of {', '.join(NAMES)} "
                      f"(KG_RAG_ENDPOINT_DIALECT)")


def from_server_header(server: str) -> Dialect:
    """The dialect for an endpoint whose HTTP ``Server`` header says ``server``."""
    if server.lower().startswith("virtuoso/"):
        from kg_rag.store.virtuoso import VirtuosoDialect

        return VirtuosoDialect()
    return STANDARD


def detect(endpoint: str, timeout: float) -> Dialect:
    """Ask ``endpoint`` once (``ASK {}``) and choose the dialect from its ``Server`` header."""
    data = urllib.parse.urlencode({"query": "ASK {}"}).encode()
    req = urllib.request.Request(endpoint, data=data,
                                 headers={"Accept": "application/sparql-results+json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the user's endpoint
            server = resp.headers.get("Server") or ""
            resp.read()
    except urllib.error.HTTPError as e:
        server = e.headers.get("Server") or "" if e.headers else ""
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError) as e:
        raise StoreError(f"cannot reach {endpoint} (timeout {timeout:g}s): "
                         f"{type(e).__name__}: {e}") from None
    dialect = from_server_header(server)
    log.debug("endpoint %s (Server: %s): %s", endpoint, server or "-", dialect.name)
    return dialect
