"""``/health`` after a write the engine cannot recover from (issue 22), and the update token.

A file size limit (RLIMIT_FSIZE) on the service process makes the engine's log writes fail as a
full disk does; RocksDB then refuses every later write, even once the limit is lifted, until a
restart. ``/health`` used to say ok: now it answers 503 ``unhealthy`` with the reason (no paths).
"""

from __future__ import annotations

import hmac
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kg_rag.service import sparql_endpoint
from kg_rag.service.sparql_endpoint import Unauthorized, check_token
from tests.support.paths import ROOT

TOKEN = "health-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}

CHILD = textwrap.dedent("""
    import resource, signal, sys, time
    from kg_rag.api import KnowledgeGraph
    from kg_rag.service import create_app
    from kg_rag.settings import Settings
    from kg_rag.store import EmbeddedStore
    from tests.support.service_server import serve

    cfg = Settings(allow_updates=True, service_token=sys.argv[2], max_query_bytes=5_000_000)
    kg = KnowledgeGraph(EmbeddedStore(sys.argv[1]), cfg)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, resource.RLIM_INFINITY))
    with serve(create_app(kg, cfg, warm=False)) as url:
        print(url, flush=True)
        time.sleep(120)
""")


@pytest.fixture()
def child(tmp_path: Path) -> Iterator[httpx.Client]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "store"), TOKEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        with httpx.Client(base_url=url, timeout=30) as c:
            yield c
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_health_turns_unhealthy_with_the_reason_after_a_failed_write(child: httpx.Client) -> None:
    c = child
    assert c.get("/health").json()["status"] == "ok"
    assert c.post("/sparql", content=b"INSERT DATA { <urn:a> <urn:b> 1 }", headers=AUTH).status_code == 204
    big = "INSERT DATA { " + " ".join(f'<urn:s{i}> <urn:p> "{"y" * 200}" .' for i in range(10_000)) + " }"
    r = c.post("/sparql", content=big.encode(), headers=AUTH)
    assert r.status_code == 503, r.text
    detail = r.json()["detail"]
    assert "nothing was written" in detail and "File too large" in detail
    assert "/tmp" not in detail and "<path>" not in detail  # no paths of this machine, said
    assert "failed on the store:" in detail                   # as "the store"
    h = c.get("/health")
    assert h.status_code == 503
    body = h.json()
    assert body["status"] == "unhealthy" and "File too large" in body["reason"]
    assert "restart" in body["reason"] and "/tmp" not in body["reason"]
    # the engine does not recover: small writes keep failing, and health stays unhealthy
    r = c.post("/sparql", content=b"INSERT DATA { <urn:a> <urn:b> 2 }", headers=AUTH)
    assert r.status_code == 503
    assert c.get("/health").status_code == 503
    # reads still work
    r = c.get("/sparql", params={"query": "ASK { <urn:a> <urn:b> 1 }"})
    assert r.status_code == 200 and r.json()["boolean"] is True


class _Req:
    def __init__(self, auth: str) -> None:
        self.headers = {"authorization": auth}


def test_the_update_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(sparql_endpoint.hmac, "compare_digest", spy)
    check_token(_Req(f"Bearer {TOKEN}"), TOKEN)  # type: ignore[arg-type]
    for wrong in (TOKEN[:-1], TOKEN + "x", "", TOKEN.upper(), "é" * 30):
        with pytest.raises(Unauthorized):
            check_token(_Req(f"Bearer {wrong}"), TOKEN)  # type: ignore[arg-type]
    with pytest.raises(Unauthorized):
        check_token(_Req(f"Basic {TOKEN}"), TOKEN)  # type: ignore[arg-type]
    # every bearer comparison went through hmac.compare_digest, on bytes, never ==
    assert len(calls) == 6 and all(b == TOKEN.encode() for _, b in calls)
    assert calls[0][0] == TOKEN.encode()
