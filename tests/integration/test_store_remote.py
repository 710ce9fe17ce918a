"""RemoteStore against endpoints that misbehave: every failure is a StoreError, never a short result.

A tiny stdlib HTTP server on loopback is scripted per URL path (``/<mode>/query``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pyoxigraph import Literal, NamedNode, Quad

import kg_rag.store.remote as remote_mod
from kg_rag.errors import QueryError, StoreError
from kg_rag.store import Change, RemoteStore
from kg_rag.store.dialect import STANDARD
from kg_rag.store.virtuoso import VirtuosoDialect
from tests.support.oxigraph_server import free_port

JSON_OK = b'{"head":{"vars":["g"]},"results":{"bindings":[{"g":{"type":"uri","value":"urn:g"}}]}}'
MODES: dict[str, tuple[int, str, bytes]] = {
    "ok": (200, "application/sparql-results+json", JSON_OK),
    "partial": (206, "application/sparql-results+json", JSON_OK),
    "html": (200, "text/html", b"<html>maintenance</html>"),
    "truncated": (200, "application/sparql-results+json", JSON_OK[:40]),
    "notdict": (200, "application/sparql-results+json", b"[1, 2]"),
    "noresults": (200, "application/sparql-results+json", b'{"head":{}}'),
    "badterm": (200, "application/sparql-results+json",
                b'{"head":{"vars":["g"]},"results":{"bindings":[{"g":{"type":"weird","value":"x"}}]}}'),
    "brokennt": (200, "application/n-triples", b"<urn:a> <urn:b> \"unterminated .\n"),
    "error500": (500, "text/plain", b"internal error"),
    "error503": (503, "text/plain", b"overloaded"),
    "bad400": (400, "text/plain", b"Parser error"),
}


REQUESTS: list[tuple[str, str, str, bytes]] = []   # method, path, Accept, body


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        REQUESTS.append((self.command, self.path, self.headers.get("Accept") or "",
                         self.rfile.read(length) if length else b""))
        mode = self.path.strip("/").split("/")[0]
        if mode in ("s1tat", "maxrows"):   # Virtuoso: a 200 that says it is not the whole result
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(JSON_OK)))
            if mode == "s1tat":
                self.send_header("X-SQL-State", "S1TAT")
                self.send_header("X-SQL-Message", "RC...: Returning incomplete results, query "
                                 "interrupted by result timeout.")
            else:
                self.send_header("X-SPARQL-MaxRows", "10000")
            self.end_headers()
            self.wfile.write(JSON_OK)
            return
        if mode in ("drip", "dripheaders"):   # one byte every 2 s, for ever (until the client goes)
            try:
                if mode == "dripheaders":
                    for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"x" * 1000:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(2)
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.end_headers()    # no length: the body ends when the connection closes
                for byte in JSON_OK * 100:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(2)
            except OSError:
                pass
            self.close_connection = True
            return
        if mode == "slow":
            time.sleep(4)
            mode = "ok"
        if mode == "cut":   # promises more bytes than it sends, then closes the connection
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(JSON_OK) + 100))
            self.end_headers()
            self.wfile.write(JSON_OK)
            self.wfile.flush()
            self.close_connection = True
            return
        status, ctype, body = MODES[mode]
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass   # clients that gave up (timeouts) make the late answers fail: expected


@pytest.fixture(scope="module")
def bad_server() -> Iterator[str]:
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.block_on_close = False
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _store(base: str, mode: str, timeout: float = 5) -> RemoteStore:
    # the standard dialect given: the fake server sees only the requests under test
    return RemoteStore(f"{base}/{mode}/query", timeout=timeout, dialect=STANDARD)


G = NamedNode("urn:g")


def test_scripted_server_answers_well_formed(bad_server: str) -> None:
    # the scripted server itself is fine: the same answer with status 200 is accepted
    assert _store(bad_server, "ok").named_graphs() == [G]


@pytest.mark.parametrize("mode,match", [
    ("partial", "HTTP 206"),
    ("html", "text/html"),
    ("truncated", "truncated or broken"),
    ("notdict", "not a SPARQL JSON result"),
    ("noresults", "no results"),
    ("badterm", "unknown term type"),
    ("cut", "IncompleteRead"),
    ("error500", "HTTP 500 .*internal error"),
    ("error503", "503"),
])
def test_select_failures_are_store_errors(bad_server: str, mode: str, match: str) -> None:
    with pytest.raises(StoreError, match=match):
        _store(bad_server, mode).select("select-graph-names")


def test_bad_request_is_a_query_error(bad_server: str) -> None:
    with pytest.raises(QueryError):
        _store(bad_server, "bad400").select("select-graph-names")
    with pytest.raises(QueryError):
        _store(bad_server, "bad400").execute_update("CLEAR ALL")


@pytest.mark.parametrize("mode", ["partial", "html", "truncated", "notdict"])
def test_ask_failures(bad_server: str, mode: str) -> None:
    with pytest.raises(StoreError):
        _store(bad_server, mode).ask("ask-statement")


@pytest.mark.parametrize("mode", ["partial", "ok", "brokennt", "cut"])
def test_construct_failures(bad_server: str, mode: str) -> None:
    # "ok" answers JSON where N-Triples were asked for: a wrong media type
    with pytest.raises(StoreError):
        _store(bad_server, mode).construct("construct-graph", bind={"g": G})


@pytest.mark.parametrize("mode", ["partial", "html", "cut"])
def test_raw_query_failures(bad_server: str, mode: str) -> None:
    with pytest.raises(StoreError):
        _store(bad_server, mode).raw_query("SELECT * WHERE { ?s ?p ?o }", "json")


def test_raw_query_wrong_media_type(bad_server: str) -> None:
    # asked for CSV (or Turtle as the fallback), got JSON
    with pytest.raises(StoreError, match="not text/csv or text/turtle"):
        _store(bad_server, "ok").raw_query("SELECT * WHERE { ?s ?p ?o }", "csv")


@pytest.mark.parametrize("mode", ["partial", "error500", "error503"])
def test_update_failures(bad_server: str, mode: str) -> None:
    with pytest.raises(StoreError):
        _store(bad_server, mode).apply(Change(insert=[Quad(G, G, Literal("x"), G)]))


@pytest.mark.parametrize("mode", ["error500", "bad400"])
def test_graph_store_failures(bad_server: str, mode: str) -> None:
    with pytest.raises(StoreError, match="Graph Store PUT"):
        _store(bad_server, mode).load_graph(G, [Quad(G, G, Literal("x"))])


def test_connection_refused() -> None:
    port = free_port()   # nothing listens there
    s = RemoteStore(f"http://127.0.0.1:{port}/query", timeout=2)
    calls: list[Callable[[], object]] = [
        lambda: s.select("select-graph-names"),
        lambda: s.ask("ask-statement"),
        lambda: s.construct("construct-graph"),
        lambda: s.raw_query("ASK {}", "json"),
        lambda: s.apply(Change(drop_graphs=[G])),
        lambda: s.load_graph(G, [Quad(G, G, G)]),
        s.named_graphs,
    ]
    for call in calls:
        with pytest.raises(StoreError, match="cannot reach"):
            call()


def test_every_remote_call_times_out(bad_server: str) -> None:
    s = _store(bad_server, "slow", timeout=1)
    calls: list[Callable[[], object]] = [
        lambda: s.select("select-graph-names"),
        lambda: s.ask("ask-statement"),
        lambda: s.construct("construct-graph"),
        lambda: s.raw_query("ASK {}", "json"),
        lambda: s.apply(Change(drop_graphs=[G])),
        lambda: s.load_graph(G, [Quad(G, G, G)]),
        lambda: s.drop_graph(G),
    ]

    def timed(call: Callable[[], object]) -> tuple[str, float]:
        t0 = time.monotonic()
        try:
            call()
        except StoreError as e:
            return str(e), time.monotonic() - t0
        return "no error", time.monotonic() - t0

    with ThreadPoolExecutor(len(calls)) as pool:     # in parallel: ~2 s instead of ~8 s
        outcomes = list(pool.map(timed, calls))
    for message, seconds in outcomes:
        assert "timeout 1s" in message
        assert seconds < 3.5   # the server sleeps 4 s (load_graph waits twice: PUT, then DELETE)


def test_every_request_carries_the_store_timeout(monkeypatch: pytest.MonkeyPatch,
                                                 bad_server: str) -> None:
    seen: list[float] = []
    real = remote_mod.http_.request

    def spy(method: str, url: str, body: bytes | None, headers: dict[str, str],
            timeout: float) -> object:
        seen.append(timeout)
        return real(method, url, body, headers, timeout)

    monkeypatch.setattr(remote_mod.http_, "request", spy)
    s = RemoteStore(f"{bad_server}/ok/query", timeout=7)
    s.select("select-graph-names")
    s.named_graphs()
    with pytest.raises(StoreError):
        s.construct("construct-graph")
    s.load_graph(G, [Quad(G, G, G)])
    s.apply(Change(drop_graphs=[G]))
    # 5 requests (and, when the store asks, the one ASK {} that chooses the endpoint's dialect,
    # kg_rag/store/dialect.py), every one with the store's timeout
    assert len(seen) in (5, 6) and all(t == 7 for t in seen)


@pytest.mark.parametrize(("mode", "match"), [
    ("s1tat", r"partial result \(X-SQL-State: S1TAT"),
    ("maxrows", r"cut the result at its row limit \(X-SPARQL-MaxRows: 10000\)"),
])
def test_a_200_that_says_it_is_partial_is_an_error(bad_server: str, mode: str, match: str) -> None:
    s = _store(bad_server, mode)
    calls: list[Callable[[], object]] = [lambda: s.select("select-graph-names"),
                                         lambda: s.ask("ask-statement"),
                                         lambda: s.raw_query("SELECT * WHERE { ?s ?p ?o }", "json")]
    for call in calls:
        with pytest.raises(StoreError, match=match):
            call()
    # the CLI: one line, exit 5
    from kg_rag.cli import main
    assert main(["--endpoint", f"{bad_server}/{mode}/query", "sparql",
                 "SELECT * WHERE { ?s ?p ?o }"]) == 5


@pytest.mark.parametrize("mode", ["drip", "dripheaders"])
def test_an_endpoint_that_drips_fails_at_the_total_deadline(bad_server: str, mode: str) -> None:
    """One byte every 2 s never trips a per-read timeout; the store's timeout is total."""
    s = _store(bad_server, mode, timeout=3)
    calls: list[Callable[[], object]] = [lambda: s.select("select-graph-names"),
                                         lambda: s.raw_query("SELECT * WHERE { ?s ?p ?o }", "json")]
    for call in calls:
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="did not answer completely in time \\(timeout 3s"):
            call()
        assert time.monotonic() - t0 < 4.5


def test_endpoint_urls_are_derived_from_the_query_endpoint() -> None:
    s = RemoteStore("http://127.0.0.1:7878/query", dialect=STANDARD)
    assert (s.update_endpoint, s.store_endpoint) == ("http://127.0.0.1:7878/update",
                                                     "http://127.0.0.1:7878/store")
    s = RemoteStore("http://h/sparql/query/", update_endpoint="http://h/u", dialect=STANDARD)
    assert (s.update_endpoint, s.store_endpoint) == ("http://h/u", "http://h/sparql/store")
    s = RemoteStore("http://h/sparql", dialect=STANDARD)   # not oxigraph-style: one URL for all three
    assert s.update_endpoint == s.store_endpoint == "http://h/sparql"
    s = RemoteStore("http://h/sparql", dialect=VirtuosoDialect())   # its Graph Store Protocol URL
    assert (s.update_endpoint, s.store_endpoint) == ("http://h/sparql", "http://h/sparql-graph-crud")
    with pytest.raises(StoreError, match="http"):
        RemoteStore("file:///etc/passwd")


def test_real_server_endpoints(oxigraph_url: str) -> None:
    """The URLs the real `oxigraph serve` answers are the ones RemoteStore derives."""
    s = RemoteStore(oxigraph_url, timeout=10)
    g = NamedNode("urn:kgr-test:endpoints")
    s.load_graph(g, [Quad(g, g, Literal("gsp"))])                   # /store
    s.apply(Change(insert=[Quad(g, g, Literal("update"), g)]))       # /update
    assert s.ask("ask-statement", bind={"o": Literal("update"), "g": g})   # /query
    assert s.ask("ask-statement", bind={"o": Literal("gsp"), "g": g})
    s.drop_graph(g)
    assert g not in s.named_graphs()


@pytest.mark.parametrize("comment", ["# Adding the kind here made it slower", "# DROP nothing",
                                     "# CONSTRUCT-like words: Describe, ask, load"])
def test_comments_do_not_change_the_request_form(oxigraph_url: str, comment: str) -> None:
    """SPARQLWrapper guesses query vs update from the first keyword-like word, comments included."""
    s = RemoteStore(oxigraph_url, timeout=10)
    g = NamedNode("urn:kgr-test:comments")
    s.execute_update(f"{comment}\n# SELECT is not what this is\n"
                     f"INSERT DATA {{ GRAPH {g} {{ {g} {g} \"x\" }} }}")
    body, media = s.raw_query(f"{comment}\nSELECT ?o WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}", "json")
    assert media == "application/sparql-results+json" and b'"x"' in body
    body, media = s.raw_query(f"{comment}\nCONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}",
                              "ntriples")
    assert media == "application/n-triples" and b'"x"' in body
    s.drop_graph(g)


def test_requests_use_content_negotiation_only(bad_server: str) -> None:
    REQUESTS.clear()
    s = _store(bad_server, "ok")
    s.select("select-graph-names")
    with pytest.raises(StoreError):
        s.raw_query("SELECT * WHERE { ?s ?p ?o }", "csv")
    (m1, _, accept1, body1), (m2, _, accept2, body2) = REQUESTS
    assert m1 == m2 == "POST"
    assert accept1 == "application/sparql-results+json"
    assert accept2 == "text/csv, text/turtle;q=0.1"
    for body in (body1, body2):
        assert body.startswith(b"query=") and b"format=" not in body and b"output=" not in body


@pytest.mark.parametrize(("mode", "status"), [("s1tat", 503), ("maxrows", 503), ("drip", 503)])
def test_the_service_over_an_endpoint_refuses_partial_and_dripped_answers(
        bad_server: str, mode: str, status: int) -> None:
    """``kg-rag serve --endpoint``: the public /sparql forwards with the same checks."""
    import httpx

    from kg_rag.api import KnowledgeGraph
    from kg_rag.service import create_app
    from kg_rag.settings import Settings
    from tests.support.service_server import serve

    cfg = Settings(query_timeout=3.0)
    kg = KnowledgeGraph(RemoteStore(f"{bad_server}/{mode}/query", timeout=3), cfg)
    with serve(create_app(kg, cfg, warm=False)) as url, httpx.Client(base_url=url, timeout=30) as c:
        t0 = time.monotonic()
        r = c.get("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"},
                  headers={"Accept": "application/sparql-results+json"})
        assert time.monotonic() - t0 < 5
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
