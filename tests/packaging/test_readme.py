"""The README's Python tour runs as written on the store `make demo` builds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.store import EmbeddedStore
from tests.support.paths import ROOT


def tour_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## A tour"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def test_tour_snippet_runs_on_the_demo_store(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(tmp_path / "demo-store"))
    build_demo(kg)
    kg.close()
    del kg
    out = subprocess.run([sys.executable, "-c", tour_snippet()], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert "branch" in out.stdout            # the chosen concept of הבדים
    assert "decision" in out.stdout          # the explanation names the decision
    assert "\u202b" not in out.stdout and "\u2067" not in out.stdout
