"""kg-rag as a client of kg-rag: ``--endpoint`` pointed at a real ``kg-rag serve`` reads; writes
need its token (``--token`` / ``KG_RAG_SERVICE_TOKEN``), ``--no-record`` asks without writing;
refusal (401/403), overload (429/503) and unreachability are three different one-line errors."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_service_cli import _start, _stop
from tests.support.oxigraph_server import free_port
from tests.support.paths import ROOT

DEMO = ROOT / "demo"
QUESTION = "הפירות העמיסו על הבדים"
TOKEN = "a-long-random-test-token-0123456789"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "KG_RAG_SERVICE_TOKEN"}
    return subprocess.run([sys.executable, "-m", "kg_rag", *args], capture_output=True, text=True,
                          timeout=300, check=False, env={**clean, **(env or {})})


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = str(tmp_path_factory.mktemp("served") / "store")
    assert _cli("--store", store, "load", str(DEMO / "thesaurus.ttl"),
                str(DEMO / "dictionary.ttl")).returncode == 0
    assert _cli("--store", store, "index", str(DEMO / "documents" / "corpus.jsonl")).returncode == 0
    proc, url, _ = _start(["--store", store], env={"KG_RAG_SERVICE_TOKEN": TOKEN},
                          serve_args=("--allow-updates",))
    try:
        yield url + "/sparql"
    finally:
        _stop(proc)


def test_reads_through_the_service(service: str) -> None:
    r = _cli("--endpoint", service, "stats")
    assert r.returncode == 0 and "triples in" in r.stdout
    r = _cli("--endpoint", service, "documents")
    assert r.returncode == 0 and "he-" in r.stdout


def test_ask_without_the_token_is_refused_and_says_what_to_do(service: str) -> None:
    r = _cli("--endpoint", service, "ask", QUESTION)
    assert r.returncode == 5, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert "refused the update: HTTP 401" in line and "--token" in line and "--no-record" in line
    assert "cannot reach" not in line


def test_ask_no_record_reads_only(service: str) -> None:
    before = _cli("--endpoint", service, "questions", "--json").stdout
    r = _cli("--endpoint", service, "ask", "--no-record", QUESTION)
    assert r.returncode == 0, r.stderr
    assert "branch" in r.stdout.lower() or "ענף" in r.stdout
    assert _cli("--endpoint", service, "questions", "--json").stdout == before


def test_ask_with_the_token_records(service: str) -> None:
    r = _cli("--endpoint", service, "--token", TOKEN, "ask", QUESTION)
    assert r.returncode == 0, r.stderr
    r = _cli("--endpoint", service, "ask", QUESTION, env={"KG_RAG_SERVICE_TOKEN": TOKEN})
    assert r.returncode == 0, r.stderr
    assert QUESTION in _cli("--endpoint", service, "questions").stdout


def test_a_wrong_token_is_named(service: str) -> None:
    r = _cli("--endpoint", service, "--token", "wrong", "ask", QUESTION)
    assert r.returncode == 5 and "the token sent was not accepted" in r.stderr


class _Busy(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(429)
        self.send_header("Retry-After", "7")
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"too many requests")

    def log_message(self, *args: object) -> None:
        pass


def test_overload_and_unreachable_are_told_apart() -> None:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        r = _cli("--endpoint", f"http://127.0.0.1:{srv.server_address[1]}/sparql", "stats")
        assert r.returncode == 5 and "is overloaded" in r.stderr and "retry after 7 s" in r.stderr
    finally:
        srv.shutdown()
    r = _cli("--endpoint", f"http://127.0.0.1:{free_port()}/sparql", "stats")
    assert r.returncode == 5 and "cannot reach" in r.stderr and "overloaded" not in r.stderr


def test_commands_on_a_served_embedded_store_go_through_the_service(tmp_path: Path) -> None:
    """While ``kg-rag serve`` holds the store, ``--store`` commands read through its /sparql
    (the store folder says who serves it); writes go there too with its token; when the service
    stops, the announcement is gone and the store opens directly again."""
    store = str(tmp_path / "store")
    assert _cli("--store", store, "load", str(DEMO / "thesaurus.ttl"),
                str(DEMO / "dictionary.ttl")).returncode == 0
    proc, _, _ = _start(["--store", store], env={"KG_RAG_SERVICE_TOKEN": TOKEN},
                        serve_args=("--allow-updates",))
    try:
        assert (Path(store) / "kg-rag-serving.json").is_file()
        r = _cli("--store", store, "stats")
        assert r.returncode == 0 and "triples in" in r.stdout
        assert "served by kg-rag serve" in r.stderr and "/sparql" in r.stderr
        r = _cli("--store", store, "ask", "--no-record", QUESTION)
        assert r.returncode == 0, r.stderr
        # a write without the token is refused with the way out; with it, it is written
        r = _cli("--store", store, "ask", QUESTION)
        assert r.returncode == 5 and "refused the update" in r.stderr
        r = _cli("--store", store, "ask", QUESTION, env={"KG_RAG_SERVICE_TOKEN": TOKEN})
        assert r.returncode == 0, r.stderr
    finally:
        _stop(proc)
    assert not (Path(store) / "kg-rag-serving.json").exists()
    r = _cli("--store", store, "questions")
    assert r.returncode == 0 and QUESTION in r.stdout and "served by" not in r.stderr


def test_a_store_held_by_an_indexer_is_still_refused_clearly(tmp_path: Path) -> None:
    """No service announced: the lock error stays (and names --endpoint as the way to share)."""
    from kg_rag.store import EmbeddedStore

    holder = EmbeddedStore(str(tmp_path / "store"))   # this process holds the lock
    try:
        r = _cli("--store", str(tmp_path / "store"), "stats")
        assert r.returncode != 0 and "in use by another process" in r.stderr
    finally:
        holder.close()
