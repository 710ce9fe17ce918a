"""The /sparql endpoint over real HTTP for a newcomer: the default graph is the union of the
named graphs unless the request or the query names a dataset (and the service description says
so); the CLI's prefixes are predeclared; a syntax error is one line whose position counts from
the user's own query."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.namespaces import PREFIXES, SKOS
from kg_rag.service import create_app
from kg_rag.service.pool import QueryPool
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.service_server import serve

G1 = NamedNode("http://example.org/g1")
G2 = NamedNode("http://example.org/g2")
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


@pytest.fixture(scope="module", params=["writable", "read-only"])
def client(request: pytest.FixtureRequest) -> Iterator[httpx.Client]:
    """A writable service and a read-only one, both answering from the query pool (the writable
    one retires children forked before a write)."""
    read_only = request.param == "read-only"
    store = EmbeddedStore(":memory:", read_only=read_only)
    c = NamedNode("http://example.org/c")
    store.oxigraph.extend([
        Quad(c, NamedNode(str(SKOS) + "prefLabel"), Literal("ענף", language="he"), G1),
        Quad(c, NamedNode(str(SKOS) + "prefLabel"), Literal("branch", language="en"), G1),
        Quad(c, NamedNode(str(SKOS) + "notation"), Literal("7"), G2),
    ])
    cfg = Settings(query_timeout=5, max_rows=100, read_only=read_only)
    app = create_app(KnowledgeGraph(store, cfg), cfg, warm=False, slots=2)
    assert isinstance(app.state.sparql.executor, QueryPool)
    with serve(app) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            yield http


def _count(r: httpx.Response) -> int:
    assert r.status_code == 200, r.text
    return int(r.json()["results"]["bindings"][0]["n"]["value"])


def test_the_default_graph_is_the_union_of_the_named_graphs(client: httpx.Client) -> None:
    assert _count(client.get("/sparql", params={"query": COUNT})) == 3
    assert _count(client.post("/sparql", content=COUNT,
                              headers={"Content-Type": "application/sparql-query"})) == 3


def test_a_dataset_in_the_request_or_the_query_is_respected(client: httpx.Client) -> None:
    assert _count(client.get("/sparql", params={"query": COUNT,
                                                "default-graph-uri": G2.value})) == 1
    from_g2 = "SELECT (COUNT(*) AS ?n) FROM <http://example.org/g2> WHERE { ?s ?p ?o }"
    assert _count(client.get("/sparql", params={"query": from_g2})) == 1
    # GRAPH ?g still sees every named graph
    per_graph = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert _count(client.get("/sparql", params={"query": per_graph})) == 3


def test_the_service_description_says_the_default_graph_is_the_union(client: httpx.Client) -> None:
    r = client.get("/sparql", headers={"Accept": "text/turtle"})
    assert r.status_code == 200
    graph = list(pyoxigraph.parse(r.content, pyoxigraph.RdfFormat.TURTLE))
    sd = "http://www.w3.org/ns/sparql-service-description#"
    assert any(t.predicate.value == sd + "feature" and t.object.value == sd + "UnionDefaultGraph"
               for t in graph)
    assert any("predeclared prefixes" in t.object.value and "skos" in t.object.value
               for t in graph if isinstance(t.object, Literal))


def test_the_cli_prefixes_are_predeclared(client: httpx.Client) -> None:
    q = 'SELECT ?l WHERE { ?c skos:prefLabel ?l FILTER(lang(?l) = "he") }'
    r = client.get("/sparql", params={"query": q})
    assert r.status_code == 200, r.text
    assert [b["l"]["value"] for b in r.json()["results"]["bindings"]] == ["ענף"]
    # every prefix the CLI predeclares, and a user's own declaration still wins
    for p in PREFIXES:
        ask = f"ASK {{ ?s {p}:x ?o }}"
        assert client.get("/sparql", params={"query": ask}).status_code == 200, p
    own = "PREFIX skos: <http://example.org/> ASK { ?c skos:prefLabel ?l }"
    assert client.get("/sparql", params={"query": own}).json()["boolean"] is False


@pytest.mark.parametrize("query,where", [
    ("SELECT ?s WHERE { ?s ?p }", "line 1, column 26"),
    ("SELECT ?s WHERE {\n  ?s ?p ?o .\n  ?s ?p }", "line 3, column 10"),
])
def test_a_syntax_error_is_one_line_at_the_users_position(client: httpx.Client, query: str,
                                                          where: str) -> None:
    r = client.get("/sparql", params={"query": query})
    assert r.status_code == 400
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert where in detail and "\n" not in detail and len(detail) < 300
    assert "PREFIX" not in detail


def test_an_unknown_prefix_is_named_in_one_line(client: httpx.Client) -> None:
    r = client.get("/sparql", params={"query": "SELECT ?x WHERE { ?x foo:bar ?y }"})
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert "'foo:' is not declared" in detail and "line 1" in detail
    assert "\\u{" not in detail and len(detail) < 300


def test_the_cli_path_counts_positions_from_the_users_query_too() -> None:
    """``kg-rag sparql`` (KnowledgeGraph.raw_query) predeclares the same prefixes, and its error
    positions no longer count them (``error at 1:909`` on a one-line query)."""
    from kg_rag.errors import QueryError

    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    assert kg.raw_query("ASK { ?c skos:prefLabel ?l }")[0]
    with pytest.raises(QueryError) as err:
        kg.raw_query("SELECT ?s WHERE { ?s ?p }")
    assert "line 1, column 26" in str(err.value) and "\n" not in str(err.value)


def test_a_remote_store_gets_the_prefixes_and_the_users_positions(oxigraph_url: str) -> None:
    """Against a real ``oxigraph serve``: the prologue goes in front of line 1 and is subtracted
    from the engine's error position again."""
    from kg_rag.errors import QueryError
    from kg_rag.store import RemoteStore

    kg = KnowledgeGraph(RemoteStore(oxigraph_url))
    body, _ = kg.raw_query("ASK { ?c skos:prefLabel ?l }")
    assert b"boolean" in body
    with pytest.raises(QueryError) as err:
        kg.raw_query("SELECT ?s WHERE { ?s ?p }")
    assert "line 1, column 26" in str(err.value) and "\n" not in str(err.value)


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_a_browser_gets_a_query_form_with_examples(client: httpx.Client) -> None:
    import html
    import re

    r = client.get("/sparql", headers={"Accept": BROWSER})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<form method="get" action="/sparql">' in r.text and "<textarea" in r.text
    assert "<script" not in r.text and "http" not in r.text.split("<body>")[0].lower()
    assert "skos" in r.text and "union" in r.text
    # an example fills the form; running the form's query answers it
    links = re.findall(r'href="(/sparql\?example=\d+)"', r.text)
    assert len(links) >= 3
    filled = client.get(links[2], headers={"Accept": BROWSER}).text
    text = html.unescape(re.search(r"<textarea[^>]*>(.*?)</textarea>", filled, re.S).group(1))
    assert "skos:prefLabel" in text
    run = client.get("/sparql", params={"query": text, "format": "json"},
                     headers={"Accept": BROWSER})
    assert run.status_code == 200, run.text
    assert run.json()["results"]["bindings"][0]["he"]["value"] == "ענף"
    # programs still get the service description
    assert client.get("/sparql", headers={"Accept": "text/turtle"}).headers[
        "content-type"].startswith("text/turtle")
    assert client.get("/sparql", headers={"Accept": "*/*"}).headers[
        "content-type"].startswith("text/turtle")


def test_syntax_messages_stay_one_short_line_for_any_query() -> None:
    """Hostile queries (bidi controls, newlines, huge tokens, unknown prefixes): the engine's
    message becomes one line of bounded length, and its position never goes below column 1."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from kg_rag.store.prologue import MAX_MESSAGE, PROLOGUE, predeclare, syntax_message

    engine = pyoxigraph.Store()

    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(st.text(alphabet=st.sampled_from(list("SELECT?x{}:\n \u202e\u05d0ab.;\"<>")), max_size=80)
           | st.builds(lambda n: "ASK { ?s " + "p" * n + ":x ?o }", st.integers(1, 500)))
    def check(query: str) -> None:
        for text, shift in ((query, 0), (predeclare(query), len(PROLOGUE))):
            try:
                engine.query(text)
            except SyntaxError as e:
                msg = syntax_message(str(e), query, shift)
                assert "\n" not in msg and len(msg) <= MAX_MESSAGE + 100
                assert "column 0" not in msg and "column -" not in msg
            except (OSError, RuntimeError):
                pass

    check()
