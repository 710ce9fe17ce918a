"""The /sparql endpoint over real HTTP (uvicorn on loopback): formats, status codes, the guard,
deadline, row cap, crash containment, no network in the query child, updates and the token."""

from __future__ import annotations

import csv
import io
import json
import socket
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import httpx
import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import QueryError
from kg_rag.service import create_app
from kg_rag.service.worker import ForkExecutor, QueryCrashed, QueryJob
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.service_server import serve

TOKEN = "test-token-0123456789"
G = NamedNode("http://example.org/g")
CROSS = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?h ?i ?j . "
         "?k ?l ?m } }")


def _store(n: int = 60) -> EmbeddedStore:
    store = EmbeddedStore(":memory:")
    store.oxigraph.extend([
        Quad(NamedNode(f"http://example.org/s{i}"), NamedNode("http://example.org/p"),
             Literal(f"v{i}\t\"q\"", language="he" if i % 2 else None) if i % 3 else Literal(i), G)
        for i in range(n)])
    return store


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[httpx.Client, EmbeddedStore]]:
    store = _store()
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=1.5, max_rows=25,
                   max_query_bytes=20_000, max_query_depth=32)
    with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False, slots=3)) as url:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client, store


SELECT = "SELECT ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?s LIMIT 5"


def test_get_select_json(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    r = c.get("/sparql", params={"query": SELECT})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/sparql-results+json")
    doc = r.json()
    assert doc["head"]["vars"] == ["s", "o"]
    assert len(doc["results"]["bindings"]) == 5
    # round trip through pyoxigraph's own parser
    parsed = pyoxigraph.parse_query_results(r.content, pyoxigraph.QueryResultsFormat.JSON)
    assert len(list(parsed)) == 5
    assert "x-kg-rag-truncated" not in r.headers


@pytest.mark.parametrize("accept,fmt", [
    ("application/sparql-results+xml", pyoxigraph.QueryResultsFormat.XML),
    ("text/csv", pyoxigraph.QueryResultsFormat.CSV),
    ("text/tab-separated-values", pyoxigraph.QueryResultsFormat.TSV),
])
def test_select_formats_parse(live: tuple[httpx.Client, EmbeddedStore], accept: str,
                              fmt: pyoxigraph.QueryResultsFormat) -> None:
    c, _ = live
    ref = list(_store().oxigraph.query(SELECT.replace("GRAPH ?g", "GRAPH <http://example.org/g>")))
    r = c.post("/sparql", data={"query": SELECT}, headers={"Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    if fmt == pyoxigraph.QueryResultsFormat.CSV:  # CSV keeps only lexical forms
        rows = list(csv.reader(io.StringIO(r.text)))
        assert rows[0] == ["s", "o"] and len(rows) == 6
        assert rows[1][1] == ref[0]["o"].value
    else:
        got = list(pyoxigraph.parse_query_results(r.content, fmt))
        assert [(s["s"], s["o"]) for s in got] == [(s["s"], s["o"]) for s in ref]


@pytest.mark.parametrize("accept,fmt", [
    ("text/turtle", pyoxigraph.RdfFormat.TURTLE),
    ("application/n-triples", pyoxigraph.RdfFormat.N_TRIPLES),
    ("application/ld+json", pyoxigraph.RdfFormat.JSON_LD),
    ("application/rdf+xml", pyoxigraph.RdfFormat.RDF_XML),
])
def test_construct_formats(live: tuple[httpx.Client, EmbeddedStore], accept: str,
                           fmt: pyoxigraph.RdfFormat) -> None:
    c, _ = live
    q = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"
    r = c.post("/sparql", content=q.encode(), headers={"Content-Type": "application/sparql-query",
                                                      "Accept": accept})
    assert r.status_code == 200 and r.headers["content-type"].startswith(accept)
    triples = list(pyoxigraph.parse(r.content, fmt))
    assert len(triples) == 25                       # max_rows of the fixture
    assert r.headers["x-kg-rag-truncated"] == "true"


def test_row_cap_is_visible(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    r = c.get("/sparql", params={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"})
    assert r.status_code == 200
    assert len(r.json()["results"]["bindings"]) == 25
    assert r.headers["x-kg-rag-truncated"] == "true"
    assert r.headers["x-kg-rag-max-rows"] == "25"


def test_ask_xml_and_dataset_parameters(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    q = "ASK { <http://example.org/s1> ?p ?o }"
    r = c.get("/sparql", params={"query": q}, headers={"Accept": "application/sparql-results+xml"})
    assert r.status_code == 200
    node = ET.fromstring(r.content).find("{http://www.w3.org/2005/sparql-results#}boolean")
    # no dataset named: the default graph is the union of the named graphs (issue 20)
    assert node is not None and node.text == "true"
    r = c.get("/sparql", params={"query": q, "default-graph-uri": G.value})
    assert r.json()["boolean"] is True
    r = c.get("/sparql", params={"query": q, "default-graph-uri": "http://example.org/none"})
    assert r.json()["boolean"] is False


@pytest.mark.parametrize("method,kwargs,status", [
    ("GET", {"params": {"query": "SELECT * WHERE {"}}, 400),
    ("GET", {"params": [("query", "ASK {}"), ("query", "ASK {}")]}, 400),
    ("GET", {"params": {"query": ""}}, 400),
    ("GET", {"params": {"query": "ASK {}"}, "headers": {"Accept": "text/csv"}}, 406),
    ("GET", {"params": {"query": "ASK {}", "default-graph-uri": "not an iri"}}, 400),
    ("POST", {"content": b"ASK {}", "headers": {"Content-Type": "text/plain"}}, 415),
    ("POST", {"content": b"ASK {}", "headers": {"Content-Type": "application/sparql-query; "
                                                                "charset=latin-1"}}, 415),
    ("POST", {"content": b"ASK {\xff}", "headers": {"Content-Type": "application/sparql-query"}}, 400),
    ("PUT", {"content": b"ASK {}"}, 405),
    ("DELETE", {}, 405),
])
def test_protocol_errors_are_problems(live: tuple[httpx.Client, EmbeddedStore], method: str,
                                      kwargs: dict, status: int) -> None:
    c, _ = live
    r = c.request(method, "/sparql", **kwargs)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    assert "Traceback" not in r.text


@pytest.mark.parametrize("query", [
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
    "select * where { service silent <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
])
def test_service_refused_over_http(live: tuple[httpx.Client, EmbeddedStore], query: str) -> None:
    c, _ = live
    r = c.get("/sparql", params={"query": query})
    assert r.status_code == 403 and "SERVICE" in r.json()["detail"]


def test_service_inside_a_string_is_a_string(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    r = c.get("/sparql", params={"query": 'SELECT ("SERVICE <http://e/> {}" AS ?x) {}'})
    assert r.status_code == 200
    assert r.json()["results"]["bindings"][0]["x"]["value"] == "SERVICE <http://e/> {}"


def test_deep_nesting_and_size_refused_before_the_engine(
        live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    deep = "SELECT * WHERE " + "{" * 5000 + "}" * 5000
    r = c.post("/sparql", data={"query": deep})
    assert r.status_code in (400, 413)
    r = c.post("/sparql", content=b"ASK {}" + b" " * 30_000,
               headers={"Content-Type": "application/sparql-query"})
    assert r.status_code == 413
    assert c.get("/sparql", params={"query": "ASK {}"}).status_code == 200


def test_body_limit_while_streaming(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    """A chunked body without Content-Length is answered 413 while it is still being sent."""
    import select
    from urllib.parse import urlsplit

    c, _ = live
    u = urlsplit(str(c.base_url))
    sock = socket.create_connection((u.hostname, u.port), timeout=5)
    sock.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-query\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
    sent = 0
    answer = b""
    try:
        while sent < 100 << 20:
            if select.select([sock], [], [], 0)[0]:
                answer = sock.recv(4096)
                break
            sock.sendall(chunk)
            sent += 65536
    except OSError:
        answer = answer or sock.recv(4096)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    assert sent < 8 << 20
    assert c.get("/health").status_code == 200


def test_deadline_really_stops_the_query(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    results: dict[str, object] = {}
    url = str(c.base_url)

    def endless() -> None:
        t0 = time.monotonic()
        results["r"] = httpx.get(url + "/sparql", params={"query": CROSS}, timeout=30)
        results["t"] = time.monotonic() - t0
        results["done"] = time.monotonic()

    th = threading.Thread(target=endless)
    th.start()
    try:
        time.sleep(0.3)
        # while it runs, the service answers other requests
        assert c.get("/sparql", params={"query": "ASK {}"}).status_code == 200
        assert c.get("/health").status_code == 200
        quick_done = time.monotonic()
    finally:
        th.join(15)
    assert quick_done < results["done"]  # type: ignore[operator]
    r = results["r"]
    assert isinstance(r, httpx.Response) and r.status_code == 503
    assert r.json()["title"] == "query timeout"
    assert 1.4 < float(results["t"]) < 5.0  # type: ignore[arg-type]  # deadline 1.5 s


def test_updates_need_the_token(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, store = live
    upd = "INSERT DATA { GRAPH <http://example.org/u> { <http://e/a> <http://e/b> 1 } }"
    r = c.post("/sparql", data={"update": upd})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    r = c.post("/sparql/update", content=upd, headers={"Content-Type": "application/sparql-update",
                                                        "Authorization": "Bearer wrong"})
    assert r.status_code == 401
    assert not store.oxigraph.contains_named_graph(NamedNode("http://example.org/u"))
    r = c.post("/sparql/update", content=upd, headers={"Content-Type": "application/sparql-update",
                                                        "Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 204
    assert store.oxigraph.contains_named_graph(NamedNode("http://example.org/u"))
    r = c.post("/sparql/update", data={"update": "LOAD <http://127.0.0.1:9/x.ttl>"},
               headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 403
    r = c.get("/sparql/update", params={"update": upd})
    assert r.status_code == 405


def test_updates_off_by_default() -> None:
    store = _store(3)
    cfg = Settings(service_token=TOKEN)
    with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url:
        r = httpx.post(url + "/sparql", data={"update": "CLEAR ALL"},
                       headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 403 and "allow-updates" in r.json()["detail"]
    assert len(store.oxigraph) == 3


def test_crash_kills_only_the_child() -> None:
    """Past the guard (called directly), a stack-crashing query takes down its child only."""
    store = _store(3)
    ex = ForkExecutor(store.oxigraph, timeout=20)
    deep = "SELECT * WHERE " + "{" * 200_000 + "}" * 200_000
    with pytest.raises((QueryCrashed, QueryError)):
        ex.run(QueryJob(deep, "json", None, None, None, 10))
    ok = ex.run(QueryJob("ASK {}", "json", None, None, None, 10))
    assert json.loads(ok.body)["boolean"] is True


def test_query_child_has_no_network() -> None:
    """Even a SERVICE that got past the guard cannot open a connection from the query child."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    store = _store(3)
    ex = ForkExecutor(store.oxigraph, timeout=10)
    q = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}"
    with pytest.raises(QueryError, match="not permitted"):
        ex.run(QueryJob(q, "json", None, None, None, 10))
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()


def test_sparqlwrapper_client(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    from SPARQLWrapper import JSON, POST, XML, SPARQLWrapper

    c, _ = live
    w = SPARQLWrapper(str(c.base_url) + "/sparql")
    w.setQuery("SELECT ?s WHERE { GRAPH <http://example.org/g> { ?s ?p ?o } } ORDER BY ?s LIMIT 3")
    w.setReturnFormat(JSON)
    res = w.query().convert()
    assert [b["s"]["value"] for b in res["results"]["bindings"]] == sorted(
        f"http://example.org/s{i}" for i in range(60))[:3]
    w.setMethod(POST)
    w.setQuery("ASK { GRAPH ?g { <http://example.org/s2> ?p ?o } }")
    w.setReturnFormat(XML)
    doc = w.query().convert()
    assert doc.getElementsByTagName("boolean")[0].firstChild.data == "true"


def test_second_server_on_the_same_store_exits_cleanly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    held = EmbeddedStore(tmp_path / "store")
    try:
        p = subprocess.run([sys.executable, "-c", "import sys; from kg_rag.cli import main; sys.exit(main())", "--store", str(tmp_path / "store"),
                            "serve", "--port", "0"], capture_output=True, text=True, timeout=60)
    finally:
        held.close()
    assert p.returncode == 5, p.stderr
    assert "in use" in p.stderr and "Traceback" not in p.stderr


def test_result_byte_cap_truncates_visibly() -> None:
    from pyoxigraph import Triple

    from kg_rag.service.results import write_solutions, write_triples

    big = Literal("x" * 10_000)
    rows = [[NamedNode(f"http://e/{i}"), big] for i in range(100)]
    for fmt, parse in [("json", pyoxigraph.QueryResultsFormat.JSON),
                       ("xml", pyoxigraph.QueryResultsFormat.XML),
                       ("tsv", pyoxigraph.QueryResultsFormat.TSV)]:
        body, truncated = write_solutions(["s", "o"], rows, fmt, 1000, max_bytes=50_000)
        got = list(pyoxigraph.parse_query_results(body, parse))
        assert truncated and 1 <= len(got) < 10 and got[0]["o"] == big
    body, truncated = write_solutions(["s", "o"], rows[:3], "csv", 1000, max_bytes=50_000)
    assert not truncated and body.count(b"\r\n") == 4
    body, truncated = write_triples([Triple(r[0], NamedNode("http://e/p"), big) for r in rows],
                                    "ntriples", 1000, max_bytes=50_000)
    assert truncated and 1 <= body.count(b"\n") < 10


def test_service_description(live: tuple[httpx.Client, EmbeddedStore]) -> None:
    c, _ = live
    r = c.get("/sparql", headers={"Accept": "text/turtle"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/turtle")
    triples = list(pyoxigraph.parse(r.content, pyoxigraph.RdfFormat.TURTLE))
    sd = "http://www.w3.org/ns/sparql-service-description#"
    langs = {t.object.value for t in triples if t.predicate.value == sd + "supportedLanguage"}
    assert langs == {sd + "SPARQL11Query", sd + "SPARQL11Update"}  # updates on in this fixture
    assert any(t.predicate.value == sd + "endpoint" and t.object.value.endswith("/sparql")
               for t in triples)
