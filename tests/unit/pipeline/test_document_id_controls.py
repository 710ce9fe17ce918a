"""A document id may hold no control character (Unicode Cc: a newline or tab would forge rows of
``kg-rag documents``) and no bidi control: refused on every path that indexes (files, JSON
Lines, standard input, the API and so REST), naming where, and nothing is written."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.documents import SourceDocument
from kg_rag.errors import InputError
from kg_rag.pipeline.index import check_documents, id_problem
from kg_rag.store import EmbeddedStore
from loaders import load_file
from tests.support.paths import ROOT

EVIL = "evil\u202e1\nfake\tline"
BAD = ["a\nb", "a\tb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb", "a\x85b", "a\u202eb", "a\u202ab",
       "a\u2066b", "a\u2069b", "a\u200eb", "a\u200fb", "a\u061cb", "a\u2028b", "a\u2029b"]
GOOD = ["a b", "notes/2024 plan", "עברית", "عربي", "naïve-café", "x\u200dy", "1"]


@pytest.mark.parametrize("doc_id", BAD)
def test_controls_and_bidi_controls_are_refused(doc_id: str) -> None:
    assert id_problem(doc_id) is not None
    with pytest.raises(InputError, match=r"corpus\.jsonl:3: the document id .* holds") as e:
        check_documents([SourceDocument(doc_id, "A rooster.", "en", source="corpus.jsonl:3")])
    assert "\n" not in str(e.value) and "\u202e" not in str(e.value)


@pytest.mark.parametrize("doc_id", GOOD)
def test_other_ids_are_kept(doc_id: str) -> None:
    assert id_problem(doc_id) is None
    check_documents([SourceDocument(doc_id, "A rooster.", "en")])


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    path = str(tmp_path / "store")
    assert main(["--store", path, "load", str(ROOT / "demo" / "thesaurus.ttl")]) == 0
    return path


def _documents(path: str, capsys: pytest.CaptureFixture[str]) -> list[object]:
    capsys.readouterr()
    assert main(["--store", path, "documents", "--json"]) == 0
    return json.loads(capsys.readouterr().out)     # type: ignore[no-any-return]


def test_kg_rag_index_refuses_the_line_and_writes_nothing(
        store_path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "fine", "text": "A rooster.", "lang": "en"}) + "\n"
                      + json.dumps({"id": EVIL, "text": "A rooster.", "lang": "en"}) + "\n",
                      encoding="utf-8")
    capsys.readouterr()
    assert main(["--store", store_path, "index", str(corpus)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "corpus.jsonl:2" in err and "U+202E" in err
    assert _documents(store_path, capsys) == []


def test_stdin_and_file_names_are_checked_too(store_path: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(b"A rooster crowed.")))
    assert main(["--store", store_path, "index", "-", "--id", "a\tb"]) == 2
    assert "U+0009" in capsys.readouterr().err
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fine.txt").write_text("A rooster crowed.", encoding="utf-8")
    (folder / "new\nline.txt").write_text("A rooster crowed.", encoding="utf-8")
    assert main(["--store", store_path, "index", str(folder)]) == 2
    assert "U+000A" in capsys.readouterr().err
    assert _documents(store_path, capsys) == []


def test_the_api_refuses_them_before_writing(tmp_path: Path) -> None:
    """The REST API's POST /documents indexes through this method."""
    store = EmbeddedStore(":memory:")
    load_file(store, ROOT / "demo" / "thesaurus.ttl")
    kg = KnowledgeGraph(store)
    docs = [SourceDocument("fine", "A rooster crowed.", "en"), SourceDocument(EVIL, "A rooster.", "en")]
    with pytest.raises(InputError, match="U\\+202E"):
        kg.index_documents(docs)
    assert kg.documents() == []
    with pytest.raises(InputError, match="U\\+000A"):
        kg.index_documents([SourceDocument("fine", "A rooster crowed.", "en"),
                            SourceDocument("x\ny", "A rooster crowed.", "en")], workers=2)
    assert kg.documents() == []
