"""The pre-forked query pool (kg_rag/service/pool.py, issue 21): the same answers and errors as a
child per query, byte for byte; a runaway query killed at the deadline and a crashed child
replaced, the next query answered by the pool; over a writable store, a child forked before a
write is retired unused, so a write is seen by the next query; concurrent queries over real
HTTP; no child left once the service stops."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import KgRagError, QueryError
from kg_rag.service import create_app, pool
from kg_rag.service.pool import QueryPool
from kg_rag.service.worker import ForkExecutor, QueryJob, QueryTimeout
from kg_rag.settings import Settings, load_settings
from kg_rag.store import Change, EmbeddedStore
from tests.support.service_server import serve
from tests.unit.store.test_guard_outbound import BOMBS

TOKEN = "test-token-0123456789"
G = NamedNode("http://example.org/g")
P = NamedNode("http://example.org/p")
CROSS = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?h ?i ?j . "
         "?k ?l ?m } }")
ASK = QueryJob("ASK { GRAPH ?g { <http://example.org/s7> ?p 7 } }", "json", None, None, None, 10)


def _quads(n: int) -> list[Quad]:
    return [Quad(NamedNode(f"http://example.org/s{i}"), P,
                 Literal(i) if i % 3 else Literal(f"v{i}\t\"q\" ש", language="he"), G)
            for i in range(n)]


@pytest.fixture(scope="module")
def read_only_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedStore]:
    """An on-disk store built, closed and opened again read-only (as ``serve --read-only``)."""
    path = tmp_path_factory.mktemp("pool") / "store"
    store = EmbeddedStore(path)
    store.oxigraph.extend(_quads(60))
    store.close()
    del store
    ro = EmbeddedStore(path, read_only=True)
    yield ro
    ro.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _pool(store: EmbeddedStore, size: int = 1, timeout: float = 1.5) -> QueryPool:
    # a long wait for an idle child: every query here goes to a pool child, none forks its own
    return QueryPool(store.oxigraph, timeout, size, wait=60)


JOBS = [
    QueryJob("SELECT ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?s", fmt, None, None,
             "http://example.org/base", 25)
    for fmt in ("json", "xml", "csv", "tsv")
] + [
    QueryJob("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", fmt, None, None, None, 25,
             union_default=True) for fmt in ("turtle", "ntriples", "jsonld", "rdfxml")
] + [
    QueryJob("ASK { ?s ?p 4 }", "xml", ("http://example.org/g",), None, None, 25),
    QueryJob("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "json", None,
             ("http://example.org/g",), None, 25),
    QueryJob("SELECT ?o WHERE { <s1> ?p ?o }", "json", None, None, "http://example.org/", 25,
             union_default=True),
]


def test_the_pool_answers_byte_for_byte_as_a_child_per_query(
        read_only_store: EmbeddedStore) -> None:
    fork, qp = ForkExecutor(read_only_store.oxigraph, 10), _pool(read_only_store, size=2)
    try:
        for job in JOBS:
            assert qp.run(job) == fork.run(job), job
        for text in ("SELEC", "SELECT * WHERE { ?s <http://example.org/p> ?o . FILTER(?o = ) }"):
            job = QueryJob(text, "json", None, None, None, 10)
            with pytest.raises(QueryError) as by_fork:
                fork.run(job)
            with pytest.raises(QueryError) as by_pool:
                qp.run(job)
            assert str(by_pool.value) == str(by_fork.value)
        assert qp.pooled == len(JOBS) + 2 and qp.forked == 0 and qp.retired == 0
    finally:
        qp.close()


def test_a_runaway_query_is_killed_and_the_next_is_answered_by_a_new_child(
        read_only_store: EmbeddedStore) -> None:
    qp = _pool(read_only_store, size=1)
    try:
        assert qp.run(ASK).body == b'{"head": {}, "boolean": true}'
        [first] = qp.pids()
        with pytest.raises(QueryTimeout, match="longer than 1.5 s"):
            qp.run(QueryJob(CROSS, "json", None, None, None, 10))
        assert not _alive(first) and qp.retired == 1
        assert qp.run(ASK).body == b'{"head": {}, "boolean": true}'
        [second] = qp.pids()
        assert second != first and qp.pooled == 3 and qp.forked == 0
    finally:
        qp.close()


@pytest.mark.parametrize("padding", [0, 200_000])
def test_a_child_that_does_not_take_its_job_is_killed_at_the_deadline(
        read_only_store: EmbeddedStore, padding: int) -> None:
    """A stopped child (as one stuck since its fork would be): the job is not read (larger than
    the pipe holds) or not answered; 503 at the deadline all the same, and a new child."""
    qp = _pool(read_only_store)
    try:
        qp.run(ASK)
        [first] = qp.pids()
        os.kill(first, signal.SIGSTOP)
        with pytest.raises(QueryTimeout):
            qp.run(QueryJob("ASK {} #" + "x" * padding, "json", None, None, None, 10))
        assert not _alive(first)
        assert qp.run(ASK).body == b'{"head": {}, "boolean": true}' and qp.forked == 0
    finally:
        qp.close()


def test_a_query_finding_every_child_busy_takes_a_child_of_its_own(
        read_only_store: EmbeddedStore) -> None:
    qp = QueryPool(read_only_store.oxigraph, 3.0, 1, wait=0.1)
    caught: list[BaseException] = []

    def runaway() -> None:
        try:
            qp.run(QueryJob(CROSS, "json", None, None, None, 10))
        except QueryTimeout as e:
            caught.append(e)

    try:
        qp.run(ASK)
        th = threading.Thread(target=runaway)
        th.start()
        while qp.pids():   # until the runaway holds the only child
            time.sleep(0.01)
        assert qp.run(ASK).body == b'{"head": {}, "boolean": true}'
        assert qp.forked == 1
        th.join(30)
        assert caught and qp.retired == 1
    finally:
        qp.close()


def _bomb(name: str) -> str:
    if name == "braces":
        return "SELECT * WHERE " + "{" * 200_000 + "}" * 200_000
    text = BOMBS[name]
    return "SELECT * WHERE" + text[text.index(" WHERE ") + 6:]


@pytest.mark.parametrize("name", ["braces", "not", "union"])
def test_a_crashing_query_fails_as_before_and_the_pool_recovers(
        read_only_store: EmbeddedStore, name: str) -> None:
    """Past the guard (the executors are called directly): the same outcome as a child per
    query — the crash of the engine, as the same error — and the pool answers the next query."""
    job = QueryJob(_bomb(name), "json", None, None, None, 10)
    fork, qp = ForkExecutor(read_only_store.oxigraph, 20), _pool(read_only_store, timeout=20)

    def outcome(ex: ForkExecutor | QueryPool) -> tuple[str, object]:
        try:
            return "answer", ex.run(job)
        except KgRagError as e:
            return type(e).__name__, (e.http_status, str(e))

    try:
        qp.run(ASK)
        [first] = qp.pids()
        expected = outcome(fork)
        assert outcome(qp) == expected
        if expected[0] == "QueryCrashed":
            assert "crashed the engine" in str(expected[1]) and not _alive(first)
        assert qp.run(ASK).body == b'{"head": {}, "boolean": true}'
        assert qp.forked == 0 and len(qp.pids()) == 1
    finally:
        qp.close()


def test_the_pool_child_has_no_network(read_only_store: EmbeddedStore) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    qp = _pool(read_only_store)
    try:
        q = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{port}/sparql> {{ ?s ?p ?o }} }}"
        with pytest.raises(QueryError, match="not permitted"):
            qp.run(QueryJob(q, "json", None, None, None, 10))
        with pytest.raises(socket.timeout):
            listener.accept()
        assert qp.pooled == 1 and qp.retired == 0   # an ordinary error: the child stays
    finally:
        listener.close()
        qp.close()


def test_a_child_is_replaced_after_its_share_of_queries(read_only_store: EmbeddedStore,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "MAX_QUERIES", 3)
    qp = _pool(read_only_store)
    try:
        seen = set()
        for _ in range(7):
            assert qp.run(ASK).body == b'{"head": {}, "boolean": true}'
            seen.update(qp.pids())
        assert len(seen) == 3 and qp.retired == 2 and qp.forked == 0
    finally:
        qp.close()


def test_a_closed_pool_answers_with_a_child_per_query(read_only_store: EmbeddedStore) -> None:
    qp = _pool(read_only_store, size=2)
    qp.run(ASK)
    children = qp.pids()
    qp.close()
    assert qp.pids() == [] and not any(_alive(pid) for pid in children)
    assert qp.run(ASK).body == b'{"head": {}, "boolean": true}' and qp.forked == 1


# --- over HTTP -----------------------------------------------------------------------------------
def test_a_read_only_service_answers_concurrent_queries_from_its_pool(
        read_only_store: EmbeddedStore) -> None:
    cfg = Settings(read_only=True, query_timeout=1.5, max_rows=25, query_pool=2)
    app = create_app(KnowledgeGraph(read_only_store, cfg), cfg, warm=False)
    qp = app.state.sparql.executor
    assert isinstance(qp, QueryPool)
    results: dict[int, tuple[int, str]] = {}
    lock = threading.Lock()
    with serve(app) as url:
        # a runaway query: 503 at the deadline; the service goes on answering from the pool
        r = httpx.get(url + "/sparql", params={"query": CROSS}, timeout=30)
        assert r.status_code == 503 and r.json()["title"] == "query timeout"
        # (killed as a pool child, or as its own if the pool was still forking its first)
        assert qp.retired == 1 or qp.forked == 1

        def client(ids: list[int]) -> None:
            with httpx.Client(base_url=url, timeout=60) as c:
                for i in ids:
                    q = f"SELECT ?o WHERE {{ <http://example.org/s{i}> ?p ?o }}"
                    r = c.post("/sparql", data={"query": q},
                               headers={"Accept": "text/tab-separated-values"})
                    with lock:
                        results[i] = (r.status_code, r.text)

        threads = [threading.Thread(target=client, args=(list(range(k, 50, 8)),))
                   for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        children = qp.pids()
    assert sorted(results) == list(range(50))
    for i, (status, text) in results.items():
        value = str(i) if i % 3 else f"v{i}\t\"q\" ש"
        rows = list(pyoxigraph.parse_query_results(text.encode(),
                                                   pyoxigraph.QueryResultsFormat.TSV))
        assert status == 200 and [row["o"].value for row in rows] == [value], (i, text)
    assert qp.pooled + qp.forked == 51 and qp.pooled > 0
    # the service stopped: its pool is closed and no child is left
    assert qp.pids() == [] and children and not any(_alive(pid) for pid in children)


def test_a_child_forked_before_a_write_is_retired_unused(tmp_path: Path) -> None:
    """The store's write counter moves on every write; a child forked before it never answers."""
    store = EmbeddedStore(tmp_path / "store")
    store.apply(Change(insert=_quads(5)))
    qp = QueryPool(store.oxigraph, 5, 1, wait=60, writes=lambda: store.writes,
                   write_lock=store.write_lock)
    count = QueryJob("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }", "json", None,
                     None, None, 10)
    try:
        assert b'"5"' in qp.run(count).body
        [first] = _idle_soon(qp)
        before = store.writes
        store.apply(Change(insert=[Quad(NamedNode("http://example.org/new"), P, Literal(6), G)]))
        assert store.writes == before + 2           # bumped as the write began and as it ended
        assert b'"6"' in qp.run(count).body           # a child forked after the write answered
        assert qp.retired == 1 and qp.forked == 0 and not _alive_soon(first)
        assert b'"6"' in qp.run(count).body and qp.retired == 1   # current children stay
    finally:
        qp.close()
        store.close()


def _idle_soon(qp: QueryPool) -> list[int]:
    for _ in range(200):
        if qp.pids():
            return qp.pids()
        time.sleep(0.02)
    raise AssertionError("the pool forked no child")


def _alive_soon(pid: int) -> bool:
    for _ in range(100):
        if not _alive(pid):
            return False
        time.sleep(0.02)
    return True


def test_a_writable_service_sees_each_write_in_the_next_query(tmp_path: Path) -> None:
    """A writable store is served from the pool too: each write retires the children forked
    before it, so the next query sees it."""
    store = EmbeddedStore(tmp_path / "store")
    store.oxigraph.extend(_quads(5))
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=5, query_pool=2)
    app = create_app(KnowledgeGraph(store, cfg), cfg, warm=False)
    qp = app.state.sparql.executor
    assert isinstance(qp, QueryPool)
    count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <http://example.org/g> { ?s ?p ?o } }"
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as c:
        for n in range(6, 9):
            update = (f"INSERT DATA {{ GRAPH <http://example.org/g> "
                      f"{{ <http://example.org/new{n}> <http://example.org/p> {n} }} }}")
            r = c.post("/sparql/update", content=update,
                       headers={"Content-Type": "application/sparql-update",
                                "Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 204
            r = c.get("/sparql", params={"query": count})
            assert r.json()["results"]["bindings"][0]["n"]["value"] == str(n), r.text
        assert qp.pooled + qp.forked == 3
    store.close()


def test_the_pool_size_is_a_setting(read_only_store: EmbeddedStore) -> None:
    assert Settings().query_pool == 2
    cfg = load_settings({"KG_RAG_QUERY_POOL": "0"}).with_(read_only=True)
    assert cfg.query_pool == 0
    app = create_app(KnowledgeGraph(read_only_store, cfg), cfg, warm=False)
    assert isinstance(app.state.sparql.executor, ForkExecutor)
    cfg = load_settings({"KG_RAG_QUERY_POOL": "3"}).with_(read_only=True)
    app = create_app(KnowledgeGraph(read_only_store, cfg), cfg, warm=False)
    assert isinstance(app.state.sparql.executor, QueryPool) and app.state.sparql.executor.size == 3
