"""The SPARQL guard against the engine itself: whatever the guard lets through must not make
pyoxigraph open a connection (issue 22: ``1.SERVICE <…>`` and ``1SERVICE`` slipped past a
keyword guard; the engine's PEG parser matches keywords without a word boundary).

A loopback listener counts the connections the engine opens; every variant the guard refuses is
also run on the engine to show that the refusal matters (the engine fetches) — so these tests
fail on a guard that misses one. Nothing leaves the machine.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg_rag.errors import QueryError
from kg_rag.store.guard import QueryRefused, check_query, check_update

MAXB, DEPTH = 100_000, 64


class Listener:
    """A loopback TCP server that accepts, counts and closes at once."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.hits = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.hits += 1
            conn.close()

    def fetched_by(self, kind: str, text: str) -> bool:
        """Run ``text`` on a one-triple engine; True when the engine connected to us."""
        store = pyoxigraph.Store()
        store.add(pyoxigraph.Quad(pyoxigraph.NamedNode("urn:s"), pyoxigraph.NamedNode("urn:p"),
                                  pyoxigraph.Literal(1)))
        before = self.hits
        try:
            if kind == "update":
                store.update(text)
            else:
                res = store.query(text)
                if not isinstance(res, pyoxigraph.QueryBoolean):
                    list(res)
        except (SyntaxError, OSError, RuntimeError, ValueError):
            pass
        # the engine connects synchronously; give the accept thread a moment to count
        for _ in range(50):
            if self.hits > before:
                break
            threading.Event().wait(0.005)
        return self.hits > before


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    srv = Listener()
    yield srv
    srv.sock.close()


# U is replaced by the listener's URL. (kind, text)
REFUSED = [
    ("query", "SELECT * { SERVICE <U> { ?s ?p ?o } }"),
    ("query", "select * { service <U> { } }"),
    ("query", "SELECT * { SeRvIcE <U> {} }"),
    ("query", "SELECT * { SERVICE#comment\n<U>{} }"),
    ("query", "SELECT * { GRAPH ?g { ?s ?p 1.SERVICE <U> { } } }"),
    ("query", "SELECT * { ?s ?p 1SERVICE <U> { } }"),
    ("query", "SELECT * { ?s ?p .5SERVICE<U>{} }"),
    ("query", "SELECT * { ?s ?p 5.e1SERVICE<U>{} }"),
    ("query", "SELECT * { ?s ?p -1.SERVICE<U>{} }"),
    ("query", "SELECT * { ?s ?p true.SERVICE <U> {} }"),
    ("query", 'SELECT * { ?s ?p "x"SERVICE<U>{} }'),
    ("query", 'SELECT * { ?s ?p "a"@en.SERVICE<U>{} }'),
    ("query", 'SELECT * { ?s ?p "a"^^<urn:x>SERVICE<U>{} }'),
    ("query", "SELECT * { ?s ?p [].SERVICE<U>{} }"),
    ("query", "SELECT * { ?s ?p ().SERVICE<U>{} }"),
    ("query", "SELECT * { ?s ?p ?o MINUS{}SERVICE<U>{} }"),
    ("query", "SELECT * {?s ?p ?o. FILTER(1<1)SERVICE<U>{} }"),
    ("query", "SELECT * { SERVICESILENT<U>{} }"),
    ("query", "SELECT * { ?s ?p ?o . ?s ?p trueSERVICE<U>{} }"),
    ("query", "PREFIX : <U> SELECT * { SERVICE:x { } }"),
    ("query", "PREFIX : <U> SELECT * { service:x { } }"),
    ("query", "PREFIX x: <U> SELECT * { SERVICEx:y { } }"),
    ("query", "PREFIX ex: <U> SELECT * { ?s ?p ex:a. SERVICE<U>{} }"),
    ("query", "ASK { FILTER EXISTS { SERVICE <U> {} } }"),
    ("query", "SELECT * { ?s ?p ?o OPTIONAL{SERVICE <U> {}} }"),
    ("update", "LOAD <U>"),
    ("update", "INSERT DATA { <urn:a> <urn:b> 1 };LOAD<U>"),
    ("update", "PREFIX : <U> load:x"),
    ("update", "PREFIX x: <U> LOADx:y"),
    ("update", "PREFIX : <U> INSERT DATA { <urn:a> <urn:b> 1 };loadsilent:x"),
    ("update", "INSERT { <urn:a> <urn:b> 2 } WHERE { ?s ?p -1.SERVICE <U> { } }"),
]

ALLOWED = [
    ("query", 'SELECT * { ?s ?p "call SERVICE <U> now" }'),
    ("query", "SELECT * { ?s ?p '''SERVICE\n<U>{}''' }"),
    ("query", "SELECT * { ?s ?p ?o } # SERVICE <U> {} in a comment"),
    ("query", "SELECT ?service { ?service ?p ?o }"),
    ("query", "SELECT * { ?s ?p ?load }"),
    ("query", "PREFIX service: <U> SELECT * { ?s service:load ?o }"),
    ("query", "PREFIX ex: <U> SELECT * { ?s ex:service ?o . ?s ex:load ?o }"),
    ("query", "PREFIX ex: <U> PREFIX : <U> SELECT * { ?s ?p ex:a.service:x }"),
    ("query", "PREFIX service: <urn:s:> SELECT * { GRAPH service:g { ?s ?p ?o } }"),
    ("query", "PREFIX service: <urn:s:> SELECT * FROM service:g { ?s ?p ?o }"),
    ("query", "SELECT * { ?s <http://example.org/service> <http://example.org/load/x> }"),
    ("query", 'SELECT * { ?s ?p "customer service"@en }'),
    ("query", "SELECT * { ?s ?p 1.5 FILTER(?p != <urn:self-service>) }"),
    ("update", 'INSERT DATA { <urn:a> <urn:b> "LOAD <U> now" }'),
    ("update", "PREFIX load: <urn:l:> INSERT DATA { GRAPH load:g { load:a load:b load:c } }"),
    ("update", "PREFIX load: <urn:l:> DROP SILENT GRAPH load:g"),
]


def _text(text: str, listener: Listener) -> str:
    return text.replace("<U>", f"<{listener.url}>")


def _check(kind: str, text: str) -> None:
    (check_update if kind == "update" else check_query)(text, MAXB, DEPTH)


@pytest.mark.parametrize(("kind", "text"), REFUSED)
def test_outbound_variants_are_refused_and_would_fetch(listener: Listener, kind: str,
                                                       text: str) -> None:
    text = _text(text, listener)
    with pytest.raises(QueryRefused) as e:
        _check(kind, text)
    assert e.value.http_status == 403
    assert "fetch" in str(e.value)
    # the refusal matters: the engine itself makes the request
    assert listener.fetched_by(kind, text), "the engine does not fetch this one: not a variant"


@pytest.mark.parametrize(("kind", "text"), ALLOWED)
def test_harmless_mentions_pass_and_do_not_fetch(listener: Listener, kind: str, text: str) -> None:
    text = _text(text, listener)
    _check(kind, text)
    assert not listener.fetched_by(kind, text)


_GLUE = st.sampled_from(["", " ", ".", "1", "1.", ".5", "1e1", "-1", "true", "false", "true ",
                         "GRAPH ", "GRAPH", "GRAPH ?g {", "FROM ", "NAMED ", "}GRAPH",
                         "undeclared:", "und:x", "_:b", "?o ", '"x"', "'x'", "?o",
                         "?o.", "[]", "()", "}", "{}", "<urn:x>", "#c\n", "_:b ", "ex:a", "ex:a.",
                         "\"a\"@en", "\"a\"@en-x", "+", "FILTER(1<1)", "MINUS{}"])
_WORD = st.sampled_from(["SERVICE", "service", "SeRvIcE", "SERVICESILENT", "SERVICE SILENT",
                         "SERVICEex:", "service:", "SERVICE:", "servicex"])
_TARGET = st.sampled_from(["<U>", ":x", "ex:x", "?x", " <U>", "#c\n<U>"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_GLUE, word=_WORD, target=_TARGET, after=st.sampled_from(["{}", " { }", "{?a ?b ?c}"]))
def test_whatever_passes_the_guard_does_not_fetch(listener: Listener, before: str, word: str,
                                                  target: str, after: str) -> None:
    text = _text(f"PREFIX ex: <U> PREFIX : <U> SELECT * {{ ?s ?p ?o . ?s ?p {before}{word}"
                 f"{target}{after} }}", listener)
    try:
        check_query(text, MAXB, DEPTH)
    except QueryError:
        return
    assert not listener.fetched_by("query", text), text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.sampled_from(["", ";", " ; ", ";#c\n"]),
       word=st.sampled_from(["LOAD", "load", "LOADSILENT", "LOAD SILENT", "loadex:", "load:",
                            "LOADex:", "xload:", "und:"]),
       target=st.sampled_from(["<U>", "x", ":x", " <U>", "#c\n<U>"]))
def test_whatever_update_passes_the_guard_does_not_load(listener: Listener, before: str,
                                                        word: str, target: str) -> None:
    text = _text(f"PREFIX ex: <U> PREFIX : <U> INSERT DATA {{ <urn:a> <urn:b> 1 }}{before}{word}"
                 f"{target}", listener)
    try:
        check_update(text, MAXB, DEPTH)
    except QueryError:
        return
    assert not listener.fetched_by("update", text), text


# --- chains: what crashed the engine's parser (issue 22) -----------------------------------------
BOMBS = {
    "not": "INSERT { <urn:a> <urn:b> 1 } WHERE { FILTER(" + "!" * 12_000 + "true) }",
    "or": "INSERT { <urn:a> <urn:b> 1 } WHERE { FILTER(true" + "||true" * 10_000 + ") }",
    "plus": "INSERT { <urn:a> <urn:b> 1 } WHERE { BIND(1" + "+1" * 20_000 + " AS ?x) }",
    "negative": "INSERT { <urn:a> <urn:b> 1 } WHERE { BIND(1" + " -1" * 20_000 + " AS ?x) }",
    "union": "INSERT { <urn:a> <urn:b> 1 } WHERE { {}" + "UNION{}" * 10_000 + " }",
    "optional": "INSERT { <urn:a> <urn:b> 1 } WHERE { " + "OPTIONAL{}" * 9_000 + " }",
    "optional.": "INSERT { <urn:a> <urn:b> 1 } WHERE { " + "OPTIONAL{}." * 9_000 + " }",
    "minus": "INSERT { <urn:a> <urn:b> 1 } WHERE { " + "MINUS{}" * 5_000 + " }",
    "bind": "INSERT { <urn:a> <urn:b> 1 } WHERE { "
            + "".join(f"BIND(1 AS ?v{i})" for i in range(5_000)) + " }",
    "groups": "INSERT { <urn:a> <urn:b> 1 } WHERE { " + "{}" * 9_000 + " }",
    "path": "INSERT { <urn:a> <urn:b> 1 } WHERE { ?s <urn:p>" + "/<urn:p>" * 9_000 + " ?o }",
    # a basic graph pattern of 10,000 triple patterns (and its ; and , forms)
    "bgp": "INSERT { <urn:a> <urn:b> 1 } WHERE { " + "?s ?p ?o . " * 9_000 + " }",
    "predicates": "INSERT { <urn:a> <urn:b> 1 } WHERE { ?s " + "?p ?o ; " * 9_000 + " }",
    "objects": "INSERT { <urn:a> <urn:b> 1 } WHERE { ?s ?p " + "?o , " * 9_000 + "?o }",
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_operator_and_pattern_chains_are_refused_as_updates_and_queries(name: str) -> None:
    text = BOMBS[name]
    assert len(text.encode()) < MAXB
    with pytest.raises(QueryError, match="chains more than") as e:
        check_update(text, MAXB, DEPTH)
    assert e.value.http_status == 400
    query = "SELECT * WHERE" + text[text.index(" WHERE ") + 6:]
    with pytest.raises(QueryError, match="chains more than"):
        check_query(query, MAXB, DEPTH)


def test_ordinary_long_queries_pass() -> None:
    # many triples, a long VALUES block, a filter with a few hundred operators, many updates
    triples = " ".join(f"?s <urn:p{i}> ?o{i} ." for i in range(500))
    assert check_query(f"SELECT * {{ {triples} }}", MAXB * 2, DEPTH).form == "SELECT"
    template = " ".join(f"<urn:s{i}> <urn:p> ?o ." for i in range(5_000))
    assert check_update(f"INSERT {{ {template} }} WHERE {{ ?s ?p ?o }}", MAXB * 4, DEPTH)
    assert check_query(f"CONSTRUCT {{ {template} }} WHERE {{ ?s ?p ?o }}", MAXB * 4, DEPTH)
    values = " ".join(f"({i} -{i} \"x{i}\")" for i in range(3_000))
    assert check_query(f"SELECT * {{ VALUES (?a ?b ?c) {{ {values} }} }}", MAXB * 2, DEPTH)
    flt = " || ".join(f"?o = {i}" for i in range(300))
    assert check_query(f"SELECT * {{ ?s ?p ?o FILTER({flt}) }}", MAXB, DEPTH)
    data = " . ".join(f"<urn:s{i}> <urn:p> -{i}, +{i}, {i}.5" for i in range(3_000))
    assert check_update(f"INSERT DATA {{ {data} }}", MAXB * 4, DEPTH)
    ops = " ; ".join("INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> 1 } }" for _ in range(2_000))
    assert check_update(ops, MAXB * 2, DEPTH)
    # data blocks: terms only, however many
    negatives = " ".join(f"-{i}" for i in range(5_000))
    assert check_query(f"SELECT * {{ ?s ?p ?x }} VALUES ?x {{ {negatives} }}", MAXB, DEPTH)
    graphs = " ".join(f"GRAPH <urn:g{i}> {{ <urn:a> <urn:b> -{i} }}" for i in range(3_000))
    assert check_update(f"INSERT DATA {{ {graphs} }}", MAXB * 2, DEPTH)
    assert check_update(f"DELETE DATA {{ {graphs} }}", MAXB * 2, DEPTH)
    # ... but a data block that is no data block does not hide a chain
    with pytest.raises(QueryError, match="chains more than"):
        check_query("SELECT * { ?s ?p ?x } VALUES ?x { 1 } " + "FILTER(" + "!" * 2_000 + "1)",
                    MAXB, DEPTH)
