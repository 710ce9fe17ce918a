"""Indexing writes many documents per update: the store ends as if each had been written alone
— the same documents, annotations and decisions; a document repeated in one call keeps its last
version; a repeated passage reuses the decision made for the first one."""

from __future__ import annotations

import json

from pyoxigraph import Literal, NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument
from kg_rag.namespaces import DECISIONS_GRAPH
from kg_rag.pipeline import index as index_module
from kg_rag.pipeline.index import IndexReport
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore, stamp

DEMO = resource_path("demo")
XSD_DATETIME = NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")


def _docs() -> list[SourceDocument]:
    rows = [json.loads(x) for x in (DEMO / "documents" / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if x]
    return [SourceDocument(r["id"], r["text"], r.get("lang")) for r in rows]


def _graph(docs: list[SourceDocument], batch: int) -> tuple[set[tuple[str, ...]], IndexReport]:
    """Every quad after indexing ``docs`` with ``batch`` documents per update (times left out)."""
    saved = index_module.WRITE_BATCH
    index_module.WRITE_BATCH = batch
    try:
        store = EmbeddedStore(":memory:")
        kg = KnowledgeGraph(store)
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
        report = kg.index_documents(docs)
        rows = {(str(q.graph_name), str(q.subject), str(q.predicate), str(q.object)) for q in store.oxigraph
                if not (isinstance(q.object, Literal) and q.object.datatype == XSD_DATETIME)
                and q.graph_name != stamp.GRAPH}   # a random token per store
        return rows, report
    finally:
        index_module.WRITE_BATCH = saved


def test_batched_writes_give_the_store_of_single_writes() -> None:
    docs = _docs()
    one, r1 = _graph(docs, 1)
    many, r32 = _graph(docs, 32)
    assert one == many and len(one) > 1000
    assert r1.decided == r32.decided > 0 and r1.reused == r32.reused


def test_repeats_within_one_call() -> None:
    docs = _docs()[:6]
    first = docs[0]
    again = SourceDocument(first.id, docs[1].text, docs[1].lang)        # the same id, new text
    twin = SourceDocument("twin", docs[2].text, docs[2].lang)            # the same passage text
    rows, report = _graph([*docs, again, twin], 32)
    single, report1 = _graph([*docs, again, twin], 1)
    assert rows == single and report.reused == report1.reused > 0  # the twin reused docs[2]'s
    # the first version of the repeated id left nothing in the document graphs (decisions stay,
    # as they do when documents are written one by one)
    alone, _ = _graph([*docs[1:], again, twin], 32)
    decisions = str(DECISIONS_GRAPH)
    assert {r for r in rows if r[0] != decisions} == {r for r in alone if r[0] != decisions}
