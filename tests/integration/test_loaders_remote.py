"""Loading into a remote store (a real `oxigraph serve` on loopback) gives the same graphs and
catalog as the embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.errors import LoadError
from kg_rag.store import EmbeddedStore, RemoteStore
from loaders import drop_source, list_sources, load_file
from tests.support.paths import DATA

DATA = DATA / "loaders"
G = "http://example.org/test-loaders-remote/"


def contents(store: EmbeddedStore | RemoteStore, g: str) -> set[tuple[str, str, str]]:
    rows = store.construct("construct-graph", bind={"g": NamedNode(g)})
    return {(str(t.subject), str(t.predicate), str(t.object)) for t in rows}


def test_remote_load_matches_embedded(oxigraph_url: str, tmp_path: Path) -> None:
    remote, local = RemoteStore(oxigraph_url), EmbeddedStore(":memory:")
    for name in ("mini-lmf.xml", "skosxl.ttl", "dictionary.ttl"):
        g = G + name
        a = load_file(local, DATA / name, graph=g)
        b = load_file(remote, DATA / name, graph=g)
        assert (a.triples, a.concepts, a.entries, a.senses) == (b.triples, b.concepts, b.entries, b.senses)
        assert contents(remote, g) == contents(local, g) and len(contents(local, g)) == a.triples
    mine = {r.graph: r for r in list_sources(remote) if r.graph.startswith(G)}
    assert set(mine) == {G + "mini-lmf.xml", G + "skosxl.ttl", G + "dictionary.ttl"}
    assert mine[G + "mini-lmf.xml"].kind == "wn-lmf"
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b ", encoding="utf-8")
    with pytest.raises(LoadError):
        load_file(remote, bad, graph=G + "skosxl.ttl")
    assert len(contents(remote, G + "skosxl.ttl")) == mine[G + "skosxl.ttl"].triples
    for g in mine:
        drop_source(remote, g)
    assert not [r for r in list_sources(remote) if r.graph.startswith(G)]
    assert not contents(remote, G + "mini-lmf.xml")
