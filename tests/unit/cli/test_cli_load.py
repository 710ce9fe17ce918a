"""CLI: load, sources, drop-source, stats, sparql (exit codes, output, read-only guard)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.cli.query import check_read_only
from kg_rag.errors import QueryError
from tests.support.paths import DATA, ROOT

DATA = DATA / "loaders"
LMF = "https://w3id.org/kg-rag/id/source/mini-lmf"


def run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_load_sources_stats_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    code, out, _ = run(capsys, store, "load", str(DATA / "mini-lmf.xml"), str(DATA / "skosxl.ttl"))
    assert code == 0
    assert "mini-lmf.xml: wn-lmf" in out and "4 entries, 5 senses" in out and "languages en" in out
    assert "skosxl.ttl: skos" in out and "languages de, en, he" in out

    code, out, _ = run(capsys, store, "load", "--json", str(DATA / "dictionary.ttl"))
    assert code == 0
    [rep] = json.loads(out)
    assert (rep["kind"], rep["entries"], rep["senses"]) == ("ontolex", 3, 5)

    code, out, _ = run(capsys, store, "sources", "--json")
    sources = {s["graph"]: s for s in json.loads(out)}
    assert code == 0 and len(sources) == 3 and sources[LMF]["kind"] == "wn-lmf"

    code, out, _ = run(capsys, store, "stats", "--json")
    stats = json.loads(out)
    graphs = {g["graph"]: g["triples"] for g in stats["graphs"]}
    assert graphs[LMF] == sources[LMF]["triples"]
    assert {"graph": LMF, "lang": "en", "count": 5} in stats["labels"]
    code, out, _ = run(capsys, store, "stats")
    assert code == 0 and f"<{LMF}>" in out

    code, out, _ = run(capsys, store, "drop-source", LMF)
    assert code == 0 and "dropped" in out
    code, out, _ = run(capsys, store, "sources")
    assert LMF not in out and "skosxl" in out
    code, _, err = run(capsys, store, "drop-source", LMF)
    assert code == 7 and err.count("\n") == 1 and "no loaded source" in err
    # a file name, as `kg-rag sources` lists it, names the source too; an unknown one is one line
    code, out, _ = run(capsys, store, "drop-source", "skosxl.ttl")
    assert code == 0 and "dropped" in out
    code, _, err = run(capsys, store, "drop-source", "no such.ttl")
    assert code == 7 and err.count("\n") == 1 and "no loaded source 'no such.ttl'" in err


def test_load_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b .\n", encoding="utf-8")
    code, out, err = run(capsys, tmp_path / "s", "load", str(bad))
    assert code == 2 and out == "" and err.startswith("kg-rag: error: ") and err.count("\n") == 1
    assert "bad.ttl:2" in err
    code, _, err = run(capsys, tmp_path / "s", "load", str(tmp_path / "missing.ttl"))
    assert code == 2 and "missing.ttl: no such file" in err
    code, _, err = run(capsys, tmp_path / "s", "load", "--graph", "http://x/g",
                       str(DATA / "skosxl.ttl"), str(DATA / "dictionary.ttl"))
    assert code == 2 and "ONE source" in err


def test_sparql_formats_and_guard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert run(capsys, store, "load", str(DATA / "mini-lmf.xml"))[0] == 0
    q = ("PREFIX kgr: <https://w3id.org/kg-rag/ns#> SELECT ?k WHERE { GRAPH ?g { ?s kgr:senseKey ?k } } "
         "ORDER BY ?k LIMIT 2")
    code, out, _ = run(capsys, store, "sparql", q, "--format", "csv")
    assert code == 0 and out.splitlines() == ["k", "bank%1:14:00::", "bank%1:17:01::"]
    code, out, _ = run(capsys, store, "sparql", q)
    assert code == 0 and json.loads(out)["results"]["bindings"][0]["k"]["value"] == "bank%1:14:00::"
    qf = tmp_path / "q.rq"
    qf.write_text("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 3", encoding="utf-8")
    code, out, _ = run(capsys, store, "sparql", "--file", str(qf), "--format", "ntriples")
    assert code == 0 and len(out.strip().splitlines()) == 3
    before = run(capsys, store, "stats", "--json")[1]
    for update in ("DROP ALL", "CLEAR GRAPH <http://x>", "INSERT DATA { <a:x> <a:y> <a:z> }",
                   "LOAD <http://127.0.0.1:9/x.ttl>",
                   "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"):
        code, out, err = run(capsys, store, "sparql", update)
        assert code == 4 and out == "" and "refused" in err, update
    assert run(capsys, store, "stats", "--json")[1] == before
    code, _, err = run(capsys, store, "sparql", "SELECT WHERE {")
    assert code == 4 and err.count("\n") == 1


def test_read_only_guard_ignores_strings_iris_variables() -> None:
    check_read_only('SELECT ?load ?drop WHERE { ?s <http://x/insert> "DELETE me" . # CLEAR\n ?s ex:copy ?add }')
    for text in ("drop graph <x>", "  Delete WHERE { ?s ?p ?o }", 'SELECT * { SERVICE ?x { } }'):
        with pytest.raises(QueryError):
            check_read_only(text)


def test_installed_command(tmp_path: Path) -> None:
    exe = ROOT / ".venv" / "bin" / "kg-rag"
    if not exe.exists():
        exe = Path(sys.executable).parent / "kg-rag"
    store = tmp_path / "store"
    res = subprocess.run([str(exe), "--store", str(store), "load", str(DATA / "mini-he.xml"), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)[0]["languages"] == ["he"]
