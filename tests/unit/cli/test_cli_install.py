"""What a new user meets after ``pip install .``: ``python -m kg_rag`` and ``--version`` work,
and a command that needs an extra that is not installed ends with one line naming the extra —
checked in a subprocess whose imports of the extras' modules fail, as on a plain install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag import __version__
from tests.support.paths import ROOT

#: run the CLI with the modules named in KG_RAG_TEST_BLOCK (comma-separated) not importable
BLOCKED_MAIN = """
import importlib.abc, os, sys
BLOCK = set(os.environ["KG_RAG_TEST_BLOCK"].split(","))
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            raise ModuleNotFoundError("No module named " + repr(name), name=name)
        return None
sys.meta_path.insert(0, Blocker())
if sys.argv[1] == "-c":
    exec(sys.argv[2])
else:
    from kg_rag.cli import main
    sys.exit(main(sys.argv[1:]))
"""
#: every optional dependency: a plain ``pip install .`` has none of them
EXTRAS = "uvicorn,starlette,multipart,python_multipart,httpx,openai,langchain_core,bm25s,matplotlib,pyshacl"


def run(*args: str, block: str = EXTRAS, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED_MAIN, *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT,
                          env={**os.environ, "KG_RAG_TEST_BLOCK": block, **(env or {})})


def test_python_dash_m_and_version() -> None:
    r = subprocess.run([sys.executable, "-m", "kg_rag", "--version"], capture_output=True,
                       text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip() == f"kg-rag {__version__}"
    r = subprocess.run([sys.executable, "-m", "kg_rag", "--help"], capture_output=True,
                       text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("usage: kg-rag")


def test_the_blocker_blocks() -> None:
    r = run("-c", "import uvicorn")
    assert r.returncode == 1 and "ModuleNotFoundError" in r.stderr


def test_a_plain_install_runs_the_core_commands(tmp_path: Path) -> None:
    r = run("--help")
    assert r.returncode == 0, r.stderr
    r = run("--store", ":memory:", "ask", "qwzx plorb")    # an empty store says so (exit 5)
    assert r.returncode == 5 and "is empty" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    store = str(tmp_path / "store")
    for cmd in (["ask", "qwzx plorb"], ["sources"], ["documents"], ["postings"], ["stats"]):
        r = run("--store", store, *cmd)                     # a mistyped path: no new store there
        assert r.returncode == 5 and f"no store at {store}" in r.stderr and r.stderr.count("\n") == 1, (cmd, r.stderr)
        assert not Path(store).exists(), cmd
    r = run("--store", store, "load", str(ROOT / "demo" / "thesaurus.ttl"))
    assert r.returncode == 0, r.stderr
    r = run("--store", store, "ask", "qwzx plorb")          # no known concept: an empty answer
    assert r.returncode == 0 and "no known concept" in r.stdout, r.stderr


def test_serve_without_the_service_extra_is_one_line() -> None:
    r = run("--store", ":memory:", "serve", "--port", "9")
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "pip install '.[service]'" in r.stderr and r.stdout == ""


@pytest.mark.slow
def test_wsd_llm_without_openai_is_one_line() -> None:
    # a key and a base URL nobody answers at: nothing is ever sent (the client cannot be built)
    env = {"KG_RAG_LLM_API_KEY": "test", "KG_RAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    r = run("--store", ":memory:", "demo", "--wsd", "llm", env=env)
    assert r.returncode == 3, r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "pip install '.[llm]'" in err[0] and "Traceback" not in r.stderr


def test_the_langchain_adapter_without_langchain_names_the_extra() -> None:
    r = run("-c", "import kg_rag.langchain")
    assert r.returncode == 1 and "pip install '.[langchain]'" in r.stderr
    assert "ConfigError" in r.stderr


def test_an_unknown_missing_module_is_one_line_too() -> None:
    from kg_rag.cli import missing_module

    assert "'.[eval]'" in missing_module(ModuleNotFoundError("x", name="bm25s.tokenization"))
    assert "pip install ." in missing_module(ModuleNotFoundError("x", name="numpy"))
