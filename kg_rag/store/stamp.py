"""The documents stamp: one token in the store that every write to a document graph moves.

Data derived from the documents and kept outside the store — the ranking's posting arrays
(:mod:`kg_rag.pipeline.posting_index`) — is made at one stamp and is current exactly while the
store still holds that stamp. Every write of this package that can touch a document graph goes
through :meth:`Store.apply <kg_rag.store.base.Store.apply>`, :meth:`~kg_rag.store.base.Store.drop_graph`
or :meth:`~kg_rag.store.base.Store.user_update`, and those move the stamp *before* they write
(so a crash half-way leaves data made at the old stamp out of date, never believed current),
then tell the store's followers what was written (:meth:`Store.follow_documents`), who may bring
their data to the new stamp. A user's update is not parsed: it moves the stamp and tells the
followers nothing but that (``change`` None), so their data is out of date until rebuilt.

The stamp is one triple in its own graph::

    GRAPH <…/graph/documents-stamp> { <…/graph/documents-stamp> kgr:documentsStamp "9f…" }

A store with no stamp, or with two (two writers raced on a remote store), has none that data
can be current at. Writes from outside this package (another tool writing the store's graphs
directly) are not seen — the same as for every derived index of a database.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.namespaces import ID, KGR

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


def tokens(store: Store) -> list[str]:
    """Every stamp token the store holds (one, unless none was set yet or two writers raced)."""
    return sorted(r["stamp"].value for r in store.select("select-documents-stamp", bind={"g": GRAPH}))


def read(store: Store) -> str | None:
    """The store's stamp; None when it has none, or more than one."""
    held = tokens(store)
    return held[0] if len(held) == 1 else None


def move(store: Store) -> tuple[str | None, str]:
    """Replace the stamp by a new token: (the stamp before — None when there was not exactly
    one —, the new token). Only the tokens read are deleted, so two writers that race on a
    remote store leave two tokens (no stamp: whatever was derived is out of date) instead of
    one that claims a state neither of them saw whole."""
    from kg_rag.store.base import Change

    held = tokens(store)
    after = new_token()
    store._apply(Change(delete=[q for t in held for q in quads(t)], insert=quads(after)))
    return (held[0] if len(held) == 1 else None), after


def new_token() -> str:
    return uuid.uuid4().hex


def quads(token: str) -> list[Quad]:
    return [Quad(GRAPH, KGR.documentsStamp, Literal(token), GRAPH)]


__all__ = ["DOCUMENTS", "GRAPH", "is_document", "move", "new_token", "quads", "read", "tokens", "touches_documents"]
