"""The documents stamp: one token in the store that every write to a document graph moves.

Data derived from the documents and kept outside the store — the ranking's posting arrays
(:mod:`kg_rag.pipeline.posting_index`) — is made at one stamp and is current exactly while the
store still holds that stamp. Every write of this package that can touch a document graph goes
through :meth:`Store.apply <kg_rag.store.base.Store.apply>`, :meth:`~kg_rag.store.base.Store.drop_graph`
or :meth:`~kg_rag.store.base.Store.user_update`, and those set a *pending* token before they write
and a finished one after (so data made at the old stamp is out of date from the start of the
write, and nothing can be made "at" a state a write is still changing; a crash half-way leaves
the pending token), then tell the store's followers what was written
(:meth:`Store.follow_documents`), who may bring their data to the new stamp. A user's update is not parsed: it moves the stamp and tells the
followers nothing but that (``change`` None), so their data is out of date until rebuilt.

The stamp is one triple in its own graph, beside the store's identity (set with the first
stamp, never changed)::

    GRAPH <…/graph/documents-stamp> { <…/graph/documents-stamp> kgr:documentsStamp "9f…" ;
                                                                dct:identifier "4c…" }

A store with no stamp, or with two (two writers raced on a remote store), has none that data
can be current at. Writes from outside this package (another tool writing the store's graphs
directly) are not seen — the same as for every derived index of a database.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.namespaces import DCT, ID, KGR

if TYPE_CHECKING:
    from kg_rag.store.base import Change, Store

#: the stamp's graph (and the subject of its one triple)
GRAPH = NamedNode(ID + "graph/documents-stamp")
#: every document graph's IRI starts with this (:func:`kg_rag.pipeline.record.doc_iri`)
DOCUMENTS = ID + "doc/"


def is_document(graph: object) -> bool:
    return isinstance(graph, NamedNode) and graph.value.startswith(DOCUMENTS)


def touches_documents(change: Change) -> bool:
    """Whether ``change`` drops or writes a document graph."""
    if any(is_document(g) for g in change.drop_graphs):
        return True
    return any(is_document(q.graph_name) for q in change.delete) or any(
        is_document(q.graph_name) for q in change.insert)


def state(store: Store) -> tuple[list[str], str | None]:
    """Every stamp token the store holds (one, unless none was set yet or two writers raced),
    and the store's identity (set with the first stamp; the first in order if two were)."""
    tokens, ids = [], []
    for r in store.select("select-documents-stamp", bind={"g": GRAPH}):
        if "stamp" in r:
            tokens.append(r["stamp"].value)
        if "identity" in r:
            ids.append(r["identity"].value)
    return sorted(tokens), (min(ids) if ids else None)


def tokens(store: Store) -> list[str]:
    return state(store)[0]


def read(store: Store) -> str | None:
    """The store's stamp; None when it has none, or more than one."""
    held = tokens(store)
    return held[0] if len(held) == 1 else None


#: a token set while a write is under way: no derived data is ever current at one
PENDING = "writing-"


def begin(store: Store) -> tuple[str | None, str]:
    """Before a write: replace the stamp by a *pending* token. Returns (the stamp before — None
    when there was not exactly one finished stamp —, the pending token). Only the tokens read
    are deleted, so two writers racing on a remote store leave two tokens (no stamp) rather than
    one that claims a state neither of them saw whole. The first write also gives the store its
    identity (a copy of the store folder keeps it, so data derived from the store stays usable
    there while the stamps agree)."""
    from kg_rag.store.base import Change

    held, identity = state(store)
    pending = PENDING + new_token()
    insert = quads(pending)
    if identity is None:
        insert.append(Quad(GRAPH, DCT.identifier, Literal(new_token()), GRAPH))
    store._apply(Change(delete=[q for t in held for q in quads(t)], insert=insert))
    before = held[0] if len(held) == 1 and not held[0].startswith(PENDING) else None
    return before, pending


def finish(store: Store, pending: str) -> str:
    """After the write: replace its pending token by a finished one, which names the state the
    write left (a writer that replaced the pending token meanwhile leaves two: no stamp)."""
    from kg_rag.store.base import Change

    after = new_token()
    store._apply(Change(delete=quads(pending), insert=quads(after)))
    return after


def move(store: Store) -> tuple[str | None, str]:
    """A finished stamp where there was none (or two): :func:`begin` and :func:`finish` with
    nothing written between."""
    before, pending = begin(store)
    return before, finish(store, pending)


def finished(token: str) -> bool:
    return not token.startswith(PENDING)


def new_token() -> str:
    return uuid.uuid4().hex


def quads(token: str) -> list[Quad]:
    return [Quad(GRAPH, KGR.documentsStamp, Literal(token), GRAPH)]


__all__ = ["DOCUMENTS", "GRAPH", "is_document", "move", "new_token", "quads", "PENDING", "begin", "finish", "finished", "read", "state", "tokens", "touches_documents"]
