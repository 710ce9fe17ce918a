"""``kg-rag index FOLDER``: ids relative to the folder, bad files skipped and named (``--strict``:
an error, nothing indexed), no absolute path of the indexing machine in the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.resources import resource_path

DEMO = resource_path("demo")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    assert main(["--store", str(path), "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")]) == 0
    return path


def corpus(root: Path) -> Path:
    for sub, text in (("a", "The fruits weighed down the branches of the fig tree."),
                      ("b", "The river bank was muddy after the rain.")):
        (root / sub).mkdir(parents=True)
        (root / sub / "notes.txt").write_text(text, encoding="utf-8")
    (root / "empty.md").write_text("\n", encoding="utf-8")
    (root / "scan.pdf").write_bytes(b"%PDF-1.7")
    return root


def documents(store: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    capsys.readouterr()
    assert main(["--store", str(store), "documents", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return out if isinstance(out, list) else out["documents"]


def test_a_folder_with_bad_files_is_indexed_and_the_bad_ones_named(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus(tmp_path / "corpus")
    capsys.readouterr()
    assert main(["--store", str(store), "index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "indexed 2 documents" in out
    assert "skipped 2 files" in err and "scan.pdf" in err and "empty.md" in err
    ids = {d["id"] for d in documents(store, capsys)}
    assert ids == {"a/notes", "b/notes"}            # two notes.txt: two documents
    capsys.readouterr()
    assert main(["--store", str(store), "sparql", "--format", "tsv",
                 "SELECT ?s WHERE { GRAPH ?g { ?d <http://purl.org/dc/terms/source> ?s } }"]) == 0
    sources = capsys.readouterr().out
    assert "a/notes.txt" in sources and str(tmp_path) not in sources


def test_strict_makes_a_bad_file_an_error_and_indexes_nothing(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus(tmp_path / "corpus")
    capsys.readouterr()
    assert main(["--store", str(store), "index", "--strict", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "empty" in err and len(err.strip().splitlines()) == 1
    assert documents(store, capsys) == []
