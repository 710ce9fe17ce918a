"""A user's query on the embedded store (``kg-rag sparql``, ``KnowledgeGraph.raw_query``) sees the
dataset the service's ``/sparql`` gives it: with no ``FROM``, the default graph is the union of
all graphs; a ``FROM`` is respected; ``GRAPH ?g`` still names each graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.namespaces import SKOS
from kg_rag.store import EmbeddedStore
from kg_rag.store.embedded import user_query
from tests.support.paths import ROOT

G1 = NamedNode("http://example.org/g1")
G2 = NamedNode("http://example.org/g2")
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
FROM_G2 = "SELECT (COUNT(*) AS ?n) FROM <http://example.org/g2> WHERE { ?s ?p ?o }"
PER_GRAPH = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture
def store() -> EmbeddedStore:
    s = EmbeddedStore(":memory:")
    c = NamedNode("http://example.org/c")
    s.oxigraph.extend([
        Quad(c, NamedNode(str(SKOS) + "prefLabel"), Literal("ענף", language="he"), G1),
        Quad(c, NamedNode(str(SKOS) + "prefLabel"), Literal("branch", language="en"), G1),
        Quad(c, NamedNode(str(SKOS) + "notation"), Literal("7"), G2),
    ])
    return s


def _count(body: bytes) -> int:
    return int(json.loads(body)["results"]["bindings"][0]["n"]["value"])


def test_the_default_graph_is_the_union_of_the_named_graphs(store: EmbeddedStore) -> None:
    assert _count(store.raw_query(COUNT, "json")[0]) == 3
    assert _count(store.raw_query(FROM_G2, "json")[0]) == 1      # a dataset named: respected
    assert _count(store.raw_query(PER_GRAPH, "json")[0]) == 3
    body, _ = store.raw_query("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "ntriples")
    assert len(body.decode("utf-8").strip().splitlines()) == 3


def test_the_same_answers_as_the_services_query_children(store: EmbeddedStore) -> None:
    """The service's query children run :func:`user_query` with ``union_default`` whenever the
    query names no dataset (``kg_rag/service/sparql_endpoint.py``)."""
    import io

    import pyoxigraph

    for text, union in ((COUNT, True), (FROM_G2, False), (PER_GRAPH, True)):
        res = user_query(store.oxigraph, text, union_default=union, predeclare=True)
        buf = io.BytesIO()
        res.serialize(buf, pyoxigraph.QueryResultsFormat.JSON)  # type: ignore[union-attr]
        assert _count(store.raw_query(text, "json", predeclare=True)[0]) == _count(buf.getvalue())


def test_knowledge_graph_raw_query(store: EmbeddedStore) -> None:
    kg = KnowledgeGraph(store)
    assert _count(kg.raw_query("SELECT (COUNT(*) AS ?n) WHERE { ?s skos:prefLabel ?o }")[0]) == 2


def test_kg_rag_sparql_counts_every_graph(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "store")
    assert main(["--store", path, "load", str(ROOT / "demo" / "thesaurus.ttl")]) == 0
    capsys.readouterr()
    assert main(["--store", path, "sparql", "--format", "tsv", PER_GRAPH]) == 0
    per_graph = capsys.readouterr().out.splitlines()[1]
    assert main(["--store", path, "sparql", "--format", "tsv", COUNT]) == 0
    union = capsys.readouterr().out.splitlines()[1]
    assert union == per_graph and int(union) > 1000
