"""``kg-rag load`` on a store that a writable ``kg-rag serve`` holds: the service has no Graph
Store Protocol route to load through, so the load is refused in one line that says what to do,
before a file is read or anything is sent; and a Graph Store write an endpoint refuses (here the
same service named with ``--endpoint``) ends in one line too, never in a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest

from tests.integration.test_client_of_service import TOKEN, _cli
from tests.integration.test_service_cli import _start, _stop
from tests.support.paths import ROOT

DEMO = ROOT / "demo"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, int]]:
    """A store holding the demo dictionary only, served with updates on: (store, URL, pid)."""
    store = str(tmp_path / "store")
    assert _cli("--store", store, "load", str(DEMO / "dictionary.ttl")).returncode == 0
    proc, url, _ = _start(["--store", store], env={"KG_RAG_SERVICE_TOKEN": TOKEN},
                          serve_args=("--allow-updates",))
    try:
        yield store, url, proc.pid
    finally:
        assert _stop(proc) == 0


def _quads(store: str) -> set[str]:
    return {str(q) for q in pyoxigraph.Store.read_only(store)}


def test_load_is_refused_in_one_line_and_nothing_is_written(served: tuple[str, str, int]) -> None:
    store, _, pid = served
    token = {"KG_RAG_SERVICE_TOKEN": TOKEN}
    r = _cli("-q", "--store", store, "load", str(DEMO / "thesaurus.ttl"), env=token)
    assert r.returncode == 5, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("kg-rag: error: ") and "served by kg-rag serve" in line
    assert f"pid {pid}" in line and "stop the service" in line and "nothing was sent" in line
    # without -q: the warning that the service is used, then the same line; no traceback
    r = _cli("--store", store, "load", str(DEMO / "thesaurus.ttl"), env=token)
    assert r.returncode == 5 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == line
    sources = _cli("--store", store, "sources")
    assert sources.returncode == 0 and "thesaurus" not in sources.stdout
    assert "dictionary" in sources.stdout


def test_the_store_is_unchanged_after_the_refused_load(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    assert _cli("--store", store, "load", str(DEMO / "dictionary.ttl")).returncode == 0
    before = _quads(store)
    proc, _, _ = _start(["--store", store], env={"KG_RAG_SERVICE_TOKEN": TOKEN},
                        serve_args=("--allow-updates",))
    try:
        r = _cli("-q", "--store", store, "load", str(DEMO / "thesaurus.ttl"),
                 env={"KG_RAG_SERVICE_TOKEN": TOKEN})
        assert r.returncode == 5
    finally:
        assert _stop(proc) == 0
    assert _quads(store) == before


def test_a_refused_graph_store_load_is_one_line_not_a_traceback(
        served: tuple[str, str, int]) -> None:
    """Through ``--endpoint`` the service is just an endpoint: its refusal of the Graph Store
    PUT (HTTP 405) and of the clean-up DELETE after it are lines, not chained tracebacks."""
    _, url, _ = served
    r = _cli("-q", "--endpoint", url + "/sparql", "--token", TOKEN, "load",
             str(DEMO / "thesaurus.ttl"))
    assert r.returncode == 5, r.stderr
    assert "Traceback" not in r.stderr and "During handling" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("kg-rag: error: ") and "HTTP 405" in lines[-1]
    assert "takes no Graph Store Protocol PUT" in lines[-1] and "before serving it" in lines[-1]
    assert all(line.startswith(("kg-rag: error: ", "ERROR ")) for line in lines), lines
