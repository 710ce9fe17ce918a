"""``kg-rag --store NEW index …`` reads its input before it makes the store: input that is
refused (a missing or malformed file, a bad file in a folder with ``--strict``, bad standard
input, options that do not fit) ends the command with exit code 2 in one line and leaves no store
folder behind; good input still makes the store and is indexed into it."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def _files(tmp_path: Path) -> Path:
    inputs = tmp_path / "inputs"
    (inputs / "folder").mkdir(parents=True)
    (inputs / "bad.jsonl").write_text('{"id": "a", "text": "ok"}\nnot json\n', encoding="utf-8")
    (inputs / "good.txt").write_text("The branches bend.", encoding="utf-8")
    (inputs / "folder" / "good.txt").write_text("The branches bend.", encoding="utf-8")
    (inputs / "folder" / "empty.md").write_text("\n", encoding="utf-8")
    return inputs


@pytest.mark.parametrize("arguments,stdin,message", [
    (["{in}/bad.jsonl"], b"", "bad.jsonl:2: not valid JSON"),
    (["{in}/missing.txt"], b"", "missing.txt: no such file or folder"),
    (["{in}/good.txt", "{in}/missing.txt"], b"", "missing.txt: no such file or folder"),
    (["--strict", "{in}/folder"], b"", "empty"),
    (["-", "--stdin-format", "jsonl"], b"not json\n", "standard input:1: not valid JSON"),
    (["-", "--prune"], b"text", "--prune is for folders and files"),
    (["{in}/good.txt", "--id", "x"], b"", "--id and --stdin-format are for the document"),
])
def test_refused_input_leaves_no_new_store_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        arguments: list[str], stdin: bytes, message: str) -> None:
    inputs = _files(tmp_path)
    _stdin(monkeypatch, stdin)
    store = tmp_path / "missing" / "store"
    capsys.readouterr()
    code = main(["--store", str(store), "index", *(a.format(**{"in": inputs}) for a in arguments)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "missing").exists()


def test_good_input_makes_the_store_and_is_indexed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _files(tmp_path)
    store = tmp_path / "missing" / "store"
    capsys.readouterr()
    assert main(["--store", str(store), "index", str(inputs / "folder")]) == 0
    out, err = capsys.readouterr()
    assert "indexed 1 document" in out and "empty.md" in err     # the bad file skipped, named
    assert store.is_dir()


def test_a_new_store_reads_its_input_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """What is read to check the input before the store folder is made is what gets indexed:
    a large input is not read (and parsed) a second time."""
    import kg_rag.api as api
    import kg_rag.cli.documents as cli_documents
    import kg_rag.documents as documents

    calls: list[list[str]] = []
    real = documents.read_documents

    def counting(paths, *a, **k):  # type: ignore[no-untyped-def]
        calls.append([str(p) for p in paths])
        return real(paths, *a, **k)

    monkeypatch.setattr(cli_documents, "read_documents", counting)
    monkeypatch.setattr(api, "read_documents", counting)
    inputs = _files(tmp_path)
    store = tmp_path / "new"
    assert main(["--store", str(store), "index", str(inputs / "folder")]) == 0
    assert "indexed 1 document" in capsys.readouterr().out
    assert len(calls) == 1
    # an existing store reads it once too (nothing to check before opening it)
    calls.clear()
    assert main(["--store", str(store), "index", str(inputs / "good.txt")]) == 0
    assert len(calls) == 1
