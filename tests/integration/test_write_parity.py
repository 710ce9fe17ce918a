"""The embedded store writes a change's quads through the engine (``extend``), the remote store
sends the change as SPARQL update text: both must leave the same graphs. The demo vocabulary is
loaded into an in-memory store and into a real ``oxigraph serve``, the demo corpus indexed into
each (first as new documents, then again: replaced), a document deleted, a question recorded;
after each step the two stores hold the same quads, timestamps aside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import Literal, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import read_documents
from kg_rag.namespaces import XSD
from kg_rag.pipeline.record import doc_iri
from kg_rag.pipeline.shapes import validate
from kg_rag.store import EmbeddedStore, RemoteStore, Store, stamp
from tests.support.oxigraph_server import oxigraph_binary, oxigraph_server
from tests.support.paths import ROOT

DEMO = ROOT / "demo"

pytestmark = pytest.mark.skipif(oxigraph_binary() is None,
                                reason="the oxigraph server CLI is not installed")


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[KnowledgeGraph, KnowledgeGraph]]:
    with oxigraph_server(tmp_path / "ox") as url:
        kgs = (KnowledgeGraph(EmbeddedStore(":memory:")), KnowledgeGraph(RemoteStore(url)))
        for kg in kgs:
            kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
        yield kgs
        for kg in kgs:
            kg.close()


def _graphs(store: Store) -> set[str]:
    """Every quad of the store as N-Quads text, each timestamp (xsd:dateTime) as one value: the
    two stores write at different times."""
    rows = store.select("select-subjects-by-literal")
    out = set()
    for r in rows:
        if r["g"] == stamp.GRAPH:   # a random token per store
            continue
        o = r["o"]
        if isinstance(o, Literal) and o.datatype == XSD.dateTime:
            o = Literal("T", datatype=XSD.dateTime)
        out.add(str(Quad(r["s"], r["p"], o, r["g"])))
    return out


def _same(pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> set[str]:
    embedded, remote = (_graphs(kg.store) for kg in pair)
    assert embedded == remote, (sorted(embedded - remote)[:5], sorted(remote - embedded)[:5])
    return embedded


def test_indexing_writes_the_same_graphs_on_both_stores(
        pair: tuple[KnowledgeGraph, KnowledgeGraph]) -> None:
    docs = read_documents([DEMO / "documents" / "corpus.jsonl"], 10**7)
    for kg in pair:
        kg.index_documents(docs)
    first = _same(pair)
    doc_graphs = {q for q in first if "/id/doc/" in q}
    assert len(doc_graphs) > 500 and any("/graph/decisions>" in q for q in first)

    for kg in pair:                       # again: every document's graph exists, is replaced
        kg.index_documents(docs)
    again = _same(pair)
    decisions = {q for q in first if q.endswith("/graph/decisions>")}
    assert decisions and {q for q in again if q.endswith("/graph/decisions>")} == decisions
    assert {q for q in again - first if "#decisionReused>" not in q} == set()  # reused now

    for kg in pair:
        kg.delete(docs[0].id)
        kg.ask("הפירות העמיסו על הבדים")   # a question's graph and its decisions
    after = _same(pair)
    assert not any(docs[0].id in q for q in after) and any("/id/question/" in q for q in after)
    for kg in pair:
        conforms, report = validate(kg.store)
        assert conforms, report


def test_the_embedded_first_write_sends_no_update_text(tmp_path: Path) -> None:
    """The path the parity above covers: new documents go through the engine's extend (a
    re-index, whose graphs exist, through the update)."""
    store = EmbeddedStore(tmp_path / "s")
    kg = KnowledgeGraph(store)
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    docs = read_documents([DEMO / "documents" / "corpus.jsonl"], 10**7)[:5]
    texts: list[str] = []
    real = store.execute_update

    def spy(text: str) -> None:
        if stamp.GRAPH.value not in text:   # the documents stamp's move is an update of its own
            texts.append(text)
        real(text)

    store.execute_update = spy  # type: ignore[method-assign]
    kg.index_documents(docs)
    assert texts == []
    assert store.oxigraph.contains_named_graph(doc_iri(docs[0].id))
    kg.index_documents(docs)
    assert len(texts) == 1 and texts[0].startswith("DROP SILENT GRAPH")
    kg.close()
