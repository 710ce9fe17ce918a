"""The documents stamp (kg_rag.store.stamp): every write of a document graph moves it, through
whichever public write method and on every engine, and nothing else does."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.store import Change, EmbeddedStore, RemoteStore, Store, stamp

DOC = NamedNode("https://w3id.org/kg-rag/id/doc/d1")
OTHER = NamedNode("http://example.org/g")
P = NamedNode("http://example.org/p")


@pytest.mark.parametrize("engine", [EmbeddedStore, RemoteStore])
@pytest.mark.parametrize("method", ["apply", "drop_graph", "user_update"])
def test_no_engine_overrides_the_tracked_write_methods(engine: type[Store], method: str) -> None:
    # an engine implements _apply, _drop_graph, _user_update; overriding the public method would
    # write documents without moving the stamp, and the posting index would be believed current
    assert getattr(engine, method) is getattr(Store, method)


def test_each_write_of_a_document_moves_the_stamp_and_no_other_does() -> None:
    store = EmbeddedStore(":memory:")
    seen: list[tuple[str | None, str]] = []
    store.follow_documents(lambda s, before, after, change: seen.append((before, after)))
    store.apply(Change(insert=[Quad(OTHER, P, Literal("x"), OTHER)]))
    assert stamp.state(store) == ([], None) and seen == []          # not a document: untouched
    store.apply(Change(insert=[Quad(DOC, P, Literal("x"), DOC)]))
    first = stamp.read(store)
    assert first is not None and stamp.finished(first) and seen == [(None, first)]
    assert stamp.state(store)[1] is not None                          # the identity, set once
    identity = stamp.state(store)[1]
    store.drop_graph(DOC)
    second = stamp.read(store)
    assert second not in (None, first) and seen[-1] == (first, second)
    store.user_update("INSERT DATA { GRAPH <http://example.org/g> { <http://example.org/s> <http://example.org/p> 2 } }")
    third = stamp.read(store)
    assert third not in (None, second) and seen[-1] == (second, third)  # any user update
    assert stamp.state(store)[1] == identity
    store.drop_graph(OTHER)
    assert stamp.read(store) == third


def test_a_failed_write_leaves_a_pending_stamp() -> None:
    store = EmbeddedStore(":memory:")
    store.apply(Change(insert=[Quad(DOC, P, Literal("x"), DOC)]))
    with pytest.raises(Exception):   # noqa: B017 - the engine's own error for a bad update
        store.user_update("INSERT DATA { GRAPH <http://example.org/g> { <http://example.org/s> <http://example.org/p> }")
    token = stamp.read(store)
    assert token is not None and not stamp.finished(token)
