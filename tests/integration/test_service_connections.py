"""kg-rag serve's connections (issue 22): idle sockets and headers sent a byte at a time are
closed after KG_RAG_SERVICE_HEADER_TIMEOUT, while /health keeps answering; a complete request
on a connection is unaffected, and a keep-alive connection idle after its answer is closed too."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

from tests.integration.test_service_cli import _start, _stop


def _closed(s: socket.socket) -> bool:
    """Did the server close ``s``? (What it still had to read of an answer is read first.)"""
    s.settimeout(0.2)
    try:
        while s.recv(4096):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionError:
        return True


def test_idle_and_dripping_connections_are_closed(tmp_path: Path) -> None:
    proc, url, _ = _start(["--store", str(tmp_path / "store")],
                          env={"KG_RAG_SERVICE_HEADER_TIMEOUT": "2"})
    port = int(url.rsplit(":", 1)[1])
    try:
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        drip = socket.create_connection(("127.0.0.1", port))
        drip.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        # an answered request, then the connection left open
        kept = socket.create_connection(("127.0.0.1", port))
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.settimeout(5)
        assert b"200" in kept.recv(200)
        assert httpx.get(url + "/health", timeout=5).status_code == 200   # served meanwhile
        t0, cut = time.monotonic(), False
        while time.monotonic() - t0 < 4:
            try:
                drip.sendall(b"X")   # a byte now and then keeps no request alive
            except (BrokenPipeError, ConnectionResetError):
                cut = True
                break
            time.sleep(0.5)
        assert time.monotonic() - t0 < 4 or _closed(drip)
        time.sleep(max(0.0, 2.5 - (time.monotonic() - t0)))
        assert all(_closed(s) for s in idle)
        assert (cut or _closed(drip)) and _closed(kept)
        assert httpx.get(url + "/health", timeout=5).status_code == 200
        for s in (*idle, drip, kept):
            s.close()
    finally:
        _stop(proc)
