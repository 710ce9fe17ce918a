"""CLI: ask, annotate, index, delete and the other commands as a new user meets them on the demo
store — an out-of-vocabulary question is an empty answer (exit 0) that says why, ``--json`` on
every command, stdin ``-``, usage errors (exit 2), singular/plural wording."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.cli.demo import build_demo
from kg_rag.store import open_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo store on disk (each CLI call opens and closes it)."""
    path = tmp_path_factory.mktemp("cli") / "demo-store"
    _build(path)
    yield path


def _build(path: Path) -> None:
    with KnowledgeGraph(open_store(path=str(path))) as kg:  # released on return (one opener)
        build_demo(kg)


def run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_question_of_unknown_words_is_an_empty_answer_not_an_error(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, store, "ask", "qwertyuiop zxcvbnm")
    assert code == 0, err
    assert "no results: no known concept" in out and err == ""
    code, out, err = run(capsys, store, "ask", "--json", "qwertyuiop zxcvbnm")
    a = json.loads(out)
    assert code == 0 and a["results"] == [] and "no known concept" in a["reason"]
    code, out, err = run(capsys, store, "ask", "--json", "הפירות העמיסו על הבדים")
    assert code == 0 and json.loads(out)["reason"] == ""


def test_bad_input_stays_an_error(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, store, "ask", "   ")
    assert code == 2 and "empty" in err and err.count("\n") == 1


def test_a_keyword_is_read_in_the_store_languages_and_the_cli_says_so(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, store, "ask", "Hahn", "-k", "2")
    assert code == 0, err
    assert "question [de]" in out and "language: de (assumed: its words are labels in de" in out
    assert "no results" not in out
    code, out, _ = run(capsys, store, "ask", "--json", "Bank")
    lang = json.loads(out)["language"]
    assert code == 0 and lang["source"] == "labels" and lang["langs"] == ["de", "en"]
    code, out, _ = run(capsys, store, "ask", "Bank")
    assert code == 0 and "de or en" in out and "[en]" in out and "[de]" in out
    code, out, _ = run(capsys, store, "annotate", "--json", "Zug")
    ann = json.loads(out)
    assert code == 0 and ann["lang"] == "de" and ann["language"]["source"] == "labels"
    assert ann["mentions"][0]["text"] == "Zug"
    code, out, _ = run(capsys, store, "ask", "Hahn", "--lang", "de")
    assert code == 0 and "language:" not in out  # given: nothing assumed
