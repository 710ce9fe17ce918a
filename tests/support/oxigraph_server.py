"""A real ``oxigraph serve`` on loopback for tests of the remote store.

Use the context manager anywhere (``with oxigraph_server(tmp_path) as url: ...``) or the
session fixture ``oxigraph_url`` (made available to every test by tests/conftest.py)::

    def test_x(oxigraph_url: str) -> None:
        store = RemoteStore(oxigraph_url)           # url is the /query endpoint

The server runs as a subprocess, keeps its data in a temporary folder and is
stopped (terminate, then kill) when the context ends. Tests that share the session server must
use their own graph IRIs or call :func:`clear` first.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import ROOT

OXIGRAPH = ROOT / ".venv" / "bin" / "oxigraph"


def oxigraph_binary() -> Path | None:
    """The ``oxigraph`` server CLI, from .venv or PATH (None when not installed)."""
    if OXIGRAPH.is_file():
        return OXIGRAPH
    found = shutil.which("oxigraph")
    return Path(found) if found else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    req = urllib.request.Request(url + "?query=ASK%7B%7D",
                                 headers={"Accept": "application/sparql-results+json"})
    try:
        with urllib.request.urlopen(req, timeout=1) as resp:  # noqa: S310 - loopback
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def oxigraph_server(location: Path | None = None, timeout_s: int | None = None,
                    startup: float = 20.0) -> Iterator[str]:
    """Run ``oxigraph serve`` on a free loopback port; yield its query endpoint URL."""
    binary = oxigraph_binary()
    if binary is None:
        raise RuntimeError("the oxigraph server CLI is not installed (pip install oxigraph)")
    tmp = None
    if location is None:
        tmp = tempfile.mkdtemp(prefix="kgr-oxigraph-")
        location = Path(tmp)
    port = free_port()
    cmd = [str(binary), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"]
    if timeout_s is not None:
        cmd += ["--timeout-s", str(timeout_s)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/query"
    try:
        deadline = time.monotonic() + startup
        while not _answers(url):
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"oxigraph serve exited with {proc.returncode}: {err[-500:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"oxigraph serve did not answer on port {port} in {startup}s")
            time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def oxigraph_url() -> Iterator[str]:
    """Query endpoint URL of one real ``oxigraph serve`` for the whole test session."""
    if oxigraph_binary() is None:
        pytest.skip("needs the oxigraph server CLI (pip install oxigraph)")
    with oxigraph_server() as url:
        yield url


def clear(url: str) -> None:
    """Remove everything from the server behind ``url`` (its /update endpoint)."""
    update = url[: -len("query")] + "update"
    req = urllib.request.Request(update, data=b"update=CLEAR%20ALL", method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - loopback
        if resp.status not in (200, 204):
            raise RuntimeError(f"CLEAR ALL answered HTTP {resp.status}")
