"""``kg-rag serve`` as a real process: starts quickly on an embedded store, answers, stops on
SIGTERM; over a remote store (a real ``oxigraph serve``) /sparql forwards with the same guard,
formats and row cap."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph
import pytest

from tests.support.oxigraph_server import free_port, oxigraph_binary, oxigraph_server

MAIN = "import sys; from kg_rag.cli import main; sys.exit(main())"


def _start(args: list[str], env: dict[str, str] | None = None,
           serve_args: tuple[str, ...] = ()) -> tuple[subprocess.Popen[str], str, float]:
    port = free_port()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", MAIN, *args, "serve", "--port", str(port),
                             *serve_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url, time.monotonic() - t0
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise AssertionError(f"serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() - t0 > 30:
            proc.kill()
            raise AssertionError("serve did not answer within 30 s")
        time.sleep(0.05)


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[str]:
    proc, url, took = _start(["--store", str(tmp_path / "store")])
    try:
        assert took < 10, f"startup took {took:.1f} s"
        yield url
    finally:
        assert _stop(proc) == 0


def test_serve_embedded_store(embedded: str) -> None:
    assert httpx.get(embedded + "/health").json()["store"] == "embedded"
    r = httpx.get(embedded + "/sparql", params={"query": "ASK {}"})
    assert r.status_code == 200 and r.json()["boolean"] is True
    page = httpx.get(embedded + "/")
    assert page.status_code == 200 and 'dir="auto"' in page.text
    # updates are off by default
    assert httpx.post(embedded + "/sparql", data={"update": "CLEAR ALL"}).status_code == 403


def test_allow_updates_without_token_refuses_to_start(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KG_RAG_SERVICE_TOKEN"}
    p = subprocess.run([sys.executable, "-c", MAIN, "--store", str(tmp_path / "s"), "serve",
                        "--allow-updates", "--port", str(free_port())],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 3 and "KG_RAG_SERVICE_TOKEN" in p.stderr


@pytest.mark.skipif(oxigraph_binary() is None, reason="needs the oxigraph server CLI")
def test_serve_over_a_remote_store(tmp_path: Path) -> None:
    with oxigraph_server(tmp_path / "ox") as endpoint:
        data = "\n".join(f"<http://e/s{i}> <http://e/p> \"v{i}\" ." for i in range(40)).encode()
        r = httpx.post(endpoint[: -len("query")] + "store", params={"graph": "http://e/g"},
                       content=data, headers={"Content-Type": "application/n-triples"})
        assert r.status_code in (200, 201, 204)
        proc, url, _ = _start(["--endpoint", endpoint], env={"KG_RAG_MAX_ROWS": "10"})
        try:
            q = "SELECT ?s WHERE { GRAPH <http://e/g> { ?s ?p ?o } }"
            r = httpx.get(url + "/sparql", params={"query": q}, headers={"Accept": "text/csv"})
            assert r.status_code == 200 and r.headers["x-kg-rag-truncated"] == "true"
            assert len(r.text.strip().splitlines()) == 11
            r = httpx.post(url + "/sparql", data={
                "query": "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"},
                headers={"Accept": "application/n-triples"})
            assert len(list(pyoxigraph.parse(r.content, pyoxigraph.RdfFormat.N_TRIPLES))) == 10
            r = httpx.get(url + "/sparql", params={"query": "ASK { GRAPH ?g { <http://e/s3> ?p ?o } }"})
            assert r.json()["boolean"] is True
            r = httpx.get(url + "/sparql", params={"query": "SELECT * { SERVICE <http://e/> { } }"})
            assert r.status_code == 403
            r = httpx.get(url + "/sparql", params={"query": "SELECT * {"})
            assert r.status_code == 400
        finally:
            assert _stop(proc) == 0


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_query_children_die_with_the_service(tmp_path: Path) -> None:
    """A killed service leaves no endless query running behind it."""
    import threading

    proc, url, _ = _start(["--store", str(tmp_path / "store")], env={"KG_RAG_QUERY_TIMEOUT": "60"})
    try:
        httpx.post(url + "/sparql", data={"query": "ASK {}"})
        # an endless query on an empty store: a cross product of six VALUES blocks (60^6 rows)
        q = "SELECT (COUNT(*) AS ?n) WHERE { " + " ".join(
            f"VALUES ?v{i} {{ {' '.join(str(j) for j in range(60))} }}" for i in range(6)) + " }"

        def endless() -> None:
            try:
                httpx.get(url + "/sparql", params={"query": q}, timeout=20)
            except httpx.HTTPError:
                pass

        threading.Thread(target=endless, daemon=True).start()
        deadline = time.monotonic() + 10
        kids: set[int] = set()
        while not kids and time.monotonic() < deadline:
            kids = {k for k in _children(proc.pid) if _alive(k)}
            time.sleep(0.05)
        assert kids, "the query child did not start"
    finally:
        proc.kill()
        proc.wait(10)
    deadline = time.monotonic() + 5
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(k) for k in kids)


def _files(path: Path) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(path.iterdir())}


def test_serve_read_only_writes_nothing(tmp_path: Path) -> None:
    """``kg-rag serve --read-only`` (issue 21): many distinct questions, the store's files are
    byte for byte as they were; a store that does not exist is not created."""
    from tests.support.paths import DATA

    store = tmp_path / "store"
    p = subprocess.run([sys.executable, "-c", MAIN, "--store", str(store), "load",
                        str(DATA / "loaders" / "skosxl.ttl")], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    before = _files(store)
    env = {"KG_RAG_SERVICE_RECORD": "true", "KG_RAG_SERVICE_TOKEN": "read-only-token-123"}
    proc, url, _ = _start(["--store", str(store)], env, ("--read-only",))
    try:
        with httpx.Client(base_url=url, timeout=30) as c:
            for i in range(120):
                r = c.post("/ask", json={"question": f"the branch of tree {i}", "language": "en"})
                assert r.status_code == 200, r.text
                if i % 10 == 0:
                    assert c.get("/", params={"q": f"a branch {i}", "lang": "en"}).status_code == 200
                    assert c.post("/annotate", json={"text": f"branch {i}"}).status_code == 200
            r = c.post("/documents", json={"id": "d", "text": "a branch", "lang": "en"},
                       headers={"Authorization": "Bearer read-only-token-123"})
            assert r.status_code == 403
            assert c.get("/stats").json()["triples"] > 0
    finally:
        assert _stop(proc) == 0
    assert _files(store) == before
    missing = tmp_path / "missing"
    p = subprocess.run([sys.executable, "-c", MAIN, "--store", str(missing), "serve", "--read-only",
                        "--port", str(free_port())], capture_output=True, text=True, timeout=60)
    assert p.returncode == 5 and "no store at" in p.stderr and not missing.exists()
