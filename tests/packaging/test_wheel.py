"""The built wheel works on its own: queries, ontology and demo files are inside it.

Builds the wheel with hatchling (no isolation: hatchling is a dev dependency in .venv), installs it
with ``--no-deps --target`` into a temporary folder and imports it from there with the .venv's
Python, in a working directory outside the source tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from kg_rag.store import queries
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow

CHECK = textwrap.dedent("""
    import contextlib, io, json, sys
    import kg_rag
    from kg_rag.store import queries
    from kg_rag.resources import resource_dir, resource_path
    out = {"kg_rag": kg_rag.__file__, "names": queries.names()}
    for n in out["names"]:
        queries.get(n)
    out["sparql"] = str(resource_path("sparql"))
    out["ontology"] = sorted(p.name for p in resource_path("ontology").iterdir())
    out["ontology_dir"] = str(resource_path("ontology"))
    out["demo"] = str(resource_path("demo"))
    out["demo_files"] = sorted(p.name for p in resource_dir("demo").iterdir())
    from kg_rag.pipeline.shapes import shapes_graph
    out["shapes"] = len(shapes_graph())
    from kg_rag.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(["--help"])
        except SystemExit as e:
            out["help_exit"] = e.code
    out["help"] = buf.getvalue()
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    dist, target = tmp / "dist", tmp / "site"
    build = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        capture_output=True, text=True, timeout=300, cwd=tmp)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    wheels = list(dist.glob("kg_rag-*.whl"))
    assert len(wheels) == 1
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--target", str(target), str(wheels[0])],
        capture_output=True, text=True, timeout=300, cwd=tmp)
    assert pip.returncode == 0, pip.stderr[-2000:]
    return target


def _run(target: Path, cwd: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KG_RAG_"))}
    env["PYTHONPATH"] = str(target)
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_wheel_contents(installed: Path) -> None:
    wheel = next(installed.parent.glob("dist/kg_rag-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for n in ["kg_rag/_resources/ontology/kgr.ttl", "kg_rag/_resources/ontology/shapes.ttl",
              "kg_rag/_resources/ontology/DATA-MODEL.md", "kg_rag/_resources/ontology/examples/valid.trig",
              "kg_rag/_resources/sparql/select-named-graphs.rq", "kg_rag/__init__.py",
              "kg_rag/store/embedded.py", "loaders/__init__.py"]:
        assert n in names, n
    assert not [n for n in names if n.startswith("tests/") or "__pycache__" in n or n.endswith(".pyc")]
    assert len(wheel.read_bytes()) < 5_000_000


def test_installed_wheel_is_self_contained(installed: Path, tmp_path: Path) -> None:
    out = _run(installed, tmp_path)
    assert str(out["kg_rag"]).startswith(str(installed)), "kg_rag was imported from the source tree"
    assert out["names"] == queries.names()                       # every query shipped and parses
    for key in ("sparql", "ontology_dir", "demo"):
        assert str(out[key]).startswith(str(installed / "kg_rag" / "_resources")), key
    assert {"kgr.ttl", "shapes.ttl", "DATA-MODEL.md", "examples"} <= set(out["ontology"])  # type: ignore[arg-type]
    assert out["demo_files"] == sorted(p.name for p in (ROOT / "demo").iterdir()
                                       if not p.name.startswith(".") and p.name != "__pycache__")
    assert int(out["shapes"]) > 100  # type: ignore[call-overload]
    assert out["help_exit"] == 0
    assert "usage: kg-rag" in str(out["help"])


def test_installed_console_script(installed: Path, tmp_path: Path) -> None:
    script = installed / "bin" / "kg-rag"
    assert script.is_file()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "KG_RAG_"))}
    env["PYTHONPATH"] = str(installed)
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage: kg-rag" in proc.stdout
