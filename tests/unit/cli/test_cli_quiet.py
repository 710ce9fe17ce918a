"""kg-rag --quiet: no warnings and no progress, results and errors still printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.cli import build_parser
from kg_rag.cli.common import progress_enabled, set_quiet
from tests.support.paths import ROOT

DEMO = ROOT / "demo"


def _kg_rag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg_rag", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_quiet_keeps_results_and_drops_warnings(tmp_path: Path) -> None:
    store = str(tmp_path / "s")
    assert _kg_rag("--store", store, "load", str(DEMO / "thesaurus.ttl")).returncode == 0
    assert _kg_rag("--store", store, "index", str(DEMO / "documents" / "corpus.jsonl")).returncode == 0
    [g] = [s["graph"] for s in json.loads(_kg_rag("--store", store, "sources", "--json").stdout)]
    # dropping a source that documents use warns, unless quiet; the result is printed either way
    quiet = _kg_rag("--store", store, "-q", "drop-source", "--json", g)
    assert quiet.returncode == 0 and json.loads(quiet.stdout)["documents"]
    assert quiet.stderr == ""
    assert _kg_rag("--store", store, "load", str(DEMO / "thesaurus.ttl")).returncode == 0
    [g] = [s["graph"] for s in json.loads(_kg_rag("--store", store, "sources", "--json").stdout)]
    loud = _kg_rag("--store", store, "drop-source", "--json", g)
    assert loud.returncode == 0 and "point at nothing" in loud.stderr
    # errors still reach standard error
    err = _kg_rag("--store", store, "-q", "drop-source", g)
    assert err.returncode != 0 and "no loaded source" in err.stderr


def test_quiet_turns_progress_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    set_quiet(False)
    assert progress_enabled()
    set_quiet(True)
    try:
        assert not progress_enabled()
    finally:
        set_quiet(False)


def test_quiet_and_verbose_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["-q", "-v", "stats"])
    assert e.value.code == 2 and "not allowed with" in capsys.readouterr().err
