"""``kg-rag --store NEW index …`` checks its options before it makes the store: ``--workers``
below 1, an ``--executor`` that is no ``dask://`` address, one on an embedded store, one with
``--workers`` or with standard input, and an unsupported ``--lang`` end the command with exit
code 2 in one line and leave no store folder behind."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main


@pytest.mark.parametrize("arguments,message", [
    (["--workers", "0"], "workers must be 1 or more, not 0"),
    (["--workers", "-2"], "workers must be 1 or more, not -2"),
    (["-", "--workers", "0"], "workers must be 1 or more, not 0"),
    (["--executor", "tcp://127.0.0.1:1"], "--executor must be dask://HOST:PORT"),
    (["--executor", "dask://"], "--executor must be dask://HOST:PORT"),
    (["--executor", "dask://127.0.0.1:1"], "indexing on a cluster needs a remote store (--endpoint)"),
    (["--executor", "dask://127.0.0.1:1", "--workers", "2"], "workers and a cluster executor exclude each other"),
    (["-", "--executor", "dask://127.0.0.1:1"], "--executor is for folders and files"),
    (["--lang", "zz"], "unsupported language code 'zz'"),
])
def test_refused_options_leave_no_new_store_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        arguments: list[str], message: str) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "a", "text": "The branches bend."}\n', encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"The branches bend."), encoding="utf-8"))
    store = tmp_path / "missing" / "store"
    capsys.readouterr()
    paths = [] if "-" in arguments else [str(docs)]
    code = main(["--store", str(store), "index", *paths, *arguments])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "missing").exists()
