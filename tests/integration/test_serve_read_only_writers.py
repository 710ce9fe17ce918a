"""A store that ``kg-rag serve --read-only`` holds is never written by another command: the
engine opens it read-only without taking its lock, so nothing but the service's announcement
in the store folder stops another process from opening it for writing — undefined behaviour in
the engine while the service reads it, and a write the service would not see. Commands that
write are refused in one line (exit 5, as for a store in use), reads go through the service,
and a service that was killed no longer stops anyone."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest

from tests.integration.test_client_of_service import _cli
from tests.integration.test_service_cli import _start, _stop
from tests.support.paths import ROOT

DEMO = ROOT / "demo"
REFUSED = "is served read-only by kg-rag serve"


def _quads(store: str) -> set[str]:
    return {str(q) for q in pyoxigraph.Store.read_only(store)}


@pytest.fixture
def built(tmp_path: Path) -> str:
    """A store with the demo vocabularies, one indexed document (id ``a``) and one recorded
    question."""
    store = str(tmp_path / "store")
    assert _cli("--store", store, "load", str(DEMO / "thesaurus.ttl"),
                str(DEMO / "dictionary.ttl")).returncode == 0
    (tmp_path / "a.txt").write_text("A rooster.", encoding="utf-8")
    assert _cli("--store", store, "index", str(tmp_path / "a.txt")).returncode == 0
    assert _cli("--store", store, "ask", "rooster").returncode == 0
    (tmp_path / "c.txt").write_text("Hens and a new bank.", encoding="utf-8")
    return store


@pytest.fixture
def served(built: str) -> Iterator[tuple[str, int]]:
    proc, _, _ = _start(["--store", built], env={"KG_RAG_SERVICE_TOKEN": "t"},
                        serve_args=("--read-only",))
    try:
        yield built, proc.pid
    finally:
        assert _stop(proc) == 0


def _refused(r: subprocess.CompletedProcess[str], pid: int) -> None:
    assert r.returncode == 5, r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("kg-rag: error: ") and REFUSED in line and f"pid {pid}" in line
    assert "nothing was written" in line and "stop that service" in line


def test_writers_are_refused_and_nothing_is_written(served: tuple[str, int]) -> None:
    store, pid = served
    before = _cli("--store", store, "documents", "--json")
    assert before.returncode == 0 and '"a"' in before.stdout
    asked = _cli("--store", store, "questions", "--json")
    assert asked.returncode == 0 and "rooster" in asked.stdout
    folder = Path(store).parent
    _refused(_cli("-q", "--store", store, "index", str(folder / "c.txt")), pid)
    _refused(_cli("-q", "--store", store, "ask", "hens"), pid)       # it would record
    _refused(_cli("-q", "--store", store, "annotate", "a new bank"), pid)
    _refused(_cli("-q", "--store", store, "delete", "a"), pid)
    _refused(_cli("-q", "--store", store, "load", str(DEMO / "thesaurus.ttl")), pid)
    _refused(_cli("-q", "--store", store, "forget-questions", "--all"), pid)
    # reads, and a question that records nothing, go through the service
    r = _cli("--store", store, "ask", "--no-record", "hens")
    assert r.returncode == 0 and "hens" in r.stdout, r.stderr
    assert "served read-only" in r.stderr
    assert _cli("--store", store, "documents", "--json").stdout == before.stdout
    assert _cli("--store", store, "questions", "--json").stdout == asked.stdout
    marker = json.loads((Path(store) / "kg-rag-serving.json").read_text(encoding="utf-8"))
    assert marker["read_only"] is True and marker["pid"] == pid


def test_the_store_is_unchanged_after_the_refused_writes(built: str) -> None:
    before = _quads(built)
    proc, _, _ = _start(["--store", built], serve_args=("--read-only",))
    try:
        folder = Path(built).parent
        assert _cli("-q", "--store", built, "index", str(folder / "c.txt")).returncode == 5
        assert _cli("-q", "--store", built, "ask", "hens").returncode == 5
    finally:
        assert _stop(proc) == 0
    assert not (Path(built) / "kg-rag-serving.json").exists()
    assert _quads(built) == before


def test_a_killed_read_only_service_stops_nobody(built: str) -> None:
    """Its announcement stays behind, but its lock on it went with the process: a writer finds
    no service, even when the process id written there is alive (it is another process's)."""
    proc, _, _ = _start(["--store", built], serve_args=("--read-only",))
    proc.kill()
    proc.wait(timeout=15)
    marker = Path(built) / "kg-rag-serving.json"
    data = json.loads(marker.read_text(encoding="utf-8"))
    marker.write_text(json.dumps({**data, "pid": 1}), encoding="utf-8")   # init: alive
    r = _cli("--store", built, "index", str(Path(built).parent / "c.txt"))
    assert r.returncode == 0 and "indexed 1 document" in r.stdout, r.stderr
    assert "served" not in r.stderr
