"""Issue 22 against a real ``kg-rag serve`` process over loopback HTTP: the authenticated updates
that overflowed the engine's parser in the server process (SIGSEGV: the service was dead) now
leave it up.

* With the default caps the guard refuses them with a 400 naming the limit.
* With the guard's chain cap lifted (``KG_RAG_MAX_QUERY_CHAIN``, as if a variant had slipped past
  its estimate) the pre-flight is the only defence: each update is tried first in a forked child
  on an empty store, the child dies, the answer is a one-line 400, and the service still answers
  ``/health`` and applies a normal update. An update whose planning alone outlasts the deadline
  is stopped in the child (503) instead of holding the server for minutes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.test_service_cli import _start, _stop
from tests.unit.store.test_guard_outbound import BOMBS

TOKEN = "crash-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}
#: the inputs of issue 22 (12,000 `!`, `||true` ×10⁴, `+1` ×2·10⁴, `UNION{}` ×10⁴,
#: `OPTIONAL{}` ×9,000) and two more kinds that crash the parser the same way
CRASHES = ("not", "or", "plus", "union", "optional", "minus", "bgp")

Server = tuple[subprocess.Popen[str], httpx.Client]


def _server(store: Path, **env: str) -> Iterator[Server]:
    proc, url, _ = _start(["--store", str(store)],
                          env={"KG_RAG_SERVICE_TOKEN": TOKEN, "KG_RAG_MAX_QUERY_BYTES": "300000",
                               **env},
                          serve_args=("--allow-updates",))
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield proc, client
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def lenient(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The guard's chain cap lifted: only the pre-flight stands between a bomb and the parser."""
    yield from _server(tmp_path_factory.mktemp("lenient") / "store",
                       KG_RAG_MAX_QUERY_CHAIN="10000000", KG_RAG_QUERY_TIMEOUT="2")


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _server(tmp_path_factory.mktemp("default") / "store")


def _still_serves(proc: subprocess.Popen[str], c: httpx.Client, n: int) -> None:
    assert proc.poll() is None, "the service died"
    assert c.get("/health").json()["status"] == "ok"
    ok = c.post("/sparql", content=f"INSERT DATA {{ <urn:after> <urn:n> {n} }}".encode(),
                headers=AUTH)
    assert ok.status_code == 204, ok.text
    ask = c.get("/sparql", params={"query": f"ASK {{ <urn:after> <urn:n> {n} }}"})
    assert ask.json()["boolean"] is True


@pytest.mark.parametrize("name", CRASHES)
def test_a_crashing_update_is_refused_and_the_service_lives(lenient: Server, name: str) -> None:
    proc, c = lenient
    r = c.post("/sparql", content=BOMBS[name].encode(), headers=AUTH)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert "crashed the SPARQL engine's parser" in detail and "nothing was written" in detail
    assert "\n" not in detail
    # nothing of the update was written
    assert c.get("/sparql", params={"query": "ASK { <urn:a> <urn:b> 1 }"}).json()["boolean"] is False
    _still_serves(proc, c, CRASHES.index(name))


def test_a_crashing_update_form_post_is_refused_too(lenient: Server) -> None:
    proc, c = lenient
    r = c.post("/sparql", data={"update": BOMBS["not"]}, headers={"Authorization": AUTH["Authorization"]})
    assert r.status_code == 400 and "crashed" in r.json()["detail"]
    r = c.post("/sparql/update", content=BOMBS["union"].encode(), headers=AUTH)
    assert r.status_code == 400 and "crashed" in r.json()["detail"]
    _still_serves(proc, c, 100)


def test_an_update_that_plans_past_the_deadline_is_stopped(lenient: Server) -> None:
    proc, c = lenient
    # 200 triple patterns: the engine's planner takes ~17 s even on an empty store
    text = ("INSERT { <urn:slow> <urn:b> 1 } WHERE { "
            + " ".join(f"?s{i} ?p ?o{i} ." for i in range(200)) + " }")
    r = c.post("/sparql", content=text.encode(), headers=AUTH)
    assert r.status_code == 503, r.text
    assert "longer than 2 s to check" in r.json()["detail"]
    _still_serves(proc, c, 101)


def test_a_malformed_update_is_still_the_engines_syntax_error(lenient: Server) -> None:
    proc, c = lenient
    r = c.post("/sparql", content=b"INSERT DATA { <urn:a> <urn:b> ", headers=AUTH)
    assert r.status_code == 400
    assert r.json()["detail"].startswith("malformed update: line 1, column ")
    _still_serves(proc, c, 102)


@pytest.mark.parametrize("name", ["not", "or", "plus", "union", "optional"])
def test_with_default_caps_the_guard_refuses_them_naming_the_limit(default: Server,
                                                                    name: str) -> None:
    proc, c = default
    r = c.post("/sparql", content=BOMBS[name].encode(), headers=AUTH)
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "chains more than 1000" in detail and "KG_RAG_MAX_QUERY_CHAIN" in detail
    _still_serves(proc, c, 200)
