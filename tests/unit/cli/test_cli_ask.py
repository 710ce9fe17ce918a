"""CLI: ask, annotate, index, delete and the other commands as a new user meets them on the demo
store — an out-of-vocabulary question is an empty answer (exit 0) that says why, ``--json`` on
every command, stdin ``-``, usage errors (exit 2), singular/plural wording."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import build_parser, main
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
    # bidi marks and zero-width characters alone are empty once cleaned: the same error
    code, _, err = run(capsys, store, "ask", "\u200f\u202b\u2066 \u200b")
    assert code == 2 and "the question is empty" in err and err.count("\n") == 1


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


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_dash_reads_the_question_the_text_and_a_document_from_stdin(
        store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, "הפירות העמיסו על הבדים\n".encode())
    code, out, err = run(capsys, store, "ask", "-", "--json", "-k", "1")
    a = json.loads(out)
    assert code == 0 and a["question"] == "הפירות העמיסו על הבדים" and a["results"], err
    _stdin(monkeypatch, b"Zug\n")
    code, out, _ = run(capsys, store, "annotate", "-", "--json")
    assert code == 0 and json.loads(out)["mentions"][0]["text"] == "Zug"

    _stdin(monkeypatch, "Der Hahn kräht am Morgen.\n".encode())
    code, out, err = run(capsys, store, "index", "-", "--id", "stdin-hahn", "--lang", "de")
    assert code == 0, err
    assert out.startswith("indexed 1 document (1 passage; de 1)")  # singular
    code, out, _ = run(capsys, store, "documents", "--json")
    assert {"id": "stdin-hahn", "lang": "de"}.items() <= next(
        d for d in json.loads(out) if d["id"] == "stdin-hahn").items()
    code, out, _ = run(capsys, store, "delete", "stdin-hahn", "--json")
    assert code == 0 and json.loads(out) == {"deleted": "stdin-hahn"}

    lines = b'{"id": "stdin-a", "text": "The rooster crows."}\n{"id": "stdin-b", "text": "Die Bank."}\n'
    _stdin(monkeypatch, lines)
    code, out, err = run(capsys, store, "index", "-", "--json")
    assert code == 0 and json.loads(out)["documents"] == 2, err
    for doc_id in ("stdin-a", "stdin-b"):
        assert run(capsys, store, "delete", doc_id)[0] == 0


def test_bad_stdin_is_one_line_and_writes_nothing(
        store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, before, _ = run(capsys, store, "documents", "--json")
    for data, message in ((b"\xff\xfe\x00", "standard input"), (b"  \n", "empty"),
                          (b'{"id": "x"}\n', "text")):
        _stdin(monkeypatch, data)
        code, out, err = run(capsys, store, "index", "-")
        assert code == 2 and message in err and err.count("\n") == 1 and out == ""
    code, _, err = run(capsys, store, "index", "-", "-")
    assert code == 2 and "once" in err
    code, _, err = run(capsys, store, "index", str(store), "--id", "x")
    assert code == 2 and "standard input" in err
    assert run(capsys, store, "documents", "--json")[1] == before


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser, by its name ('eval wsd' for a nested one)."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    if not any(isinstance(b, argparse._SubParsersAction) for b in sp._actions):
                        out[(prefix + " " + name).strip()] = sp
                    walk(sp, prefix + " " + name)

    walk(build_parser(), "")
    return out


def test_every_command_has_json_and_a_mistyped_wsd_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    commands = _commands()
    assert {"ask", "annotate", "index", "delete", "drop-source", "eval wsd"} <= set(commands)
    no_json = {c for c, p in commands.items() if "--json" not in p._option_string_actions}
    assert no_json == {"serve"}  # a server, not a command with a result
    with_wsd = [c for c, p in commands.items() if "--wsd" in p._option_string_actions]
    assert len(with_wsd) >= 6
    needs = {"ask": ["x"], "annotate": ["x"], "index": ["x"], "eval wsd": ["--data", "d", "--gold", "g"],
             "eval retrieval": ["x"]}
    for c in with_wsd:
        with pytest.raises(SystemExit) as e:
            main(["--store", ":memory:", *c.split(), *needs.get(c, []), "--wsd", "foo"])
        assert e.value.code == 2, c
        assert "unknown sense selection mode 'foo'" in capsys.readouterr().err


def test_explain_takes_what_ask_prints_and_focus_takes_a_word(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, store, "ask", "הגבר קרא בקול עם הזריחה", "--focus", "הגבר", "-k", "1")
    assert code == 0, err
    printed = next(line.strip() for line in out.splitlines() if line.strip().startswith("<"))
    code, text, err = run(capsys, store, "explain", printed)  # "<https://…/question/…>"
    assert code == 0 and "Question" in text, err
    short = text.split()[1]  # "Question <hash> [he]: …"
    code, again, _ = run(capsys, store, "explain", short)
    assert code == 0 and again == text
    code, _, err = run(capsys, store, "ask", "הגבר קרא", "--focus", "קרא#2")
    assert code == 2 and "occurs 1 time" in err and err.count("\n") == 1


def test_min_score_cuts_by_relevance_and_says_why_when_nothing_is_left(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = "הפירות העמיסו על הבדים"
    code, out, err = run(capsys, store, "ask", "--json", "-k", "50", q)
    full = json.loads(out)["results"]
    assert code == 0 and all(0 <= r["relevance"] <= 1 for r in full)
    cut = sorted(r["relevance"] for r in full)[len(full) // 2]
    code, out, err = run(capsys, store, "ask", "--json", "-k", "50", "--min-score", str(cut), q)
    assert code == 0 and [r["id"] for r in json.loads(out)["results"]] == [
        r["id"] for r in full if r["relevance"] >= cut]
    code, out, err = run(capsys, store, "ask", "--min-score", "1", q)
    assert code == 0 and "no results: no document reaches the minimum relevance 1" in out
    code, out, err = run(capsys, store, "ask", q)
    assert code == 0 and f"  1. {full[0]['relevance']:4.2f}  {full[0]['id']}" in out
    for bad in ("1.5", "-1", "lots"):
        with pytest.raises(SystemExit) as e:
            main(["--store", str(store), "ask", "--min-score", bad, q])
        assert e.value.code == 2 and "no number between 0 and 1" in capsys.readouterr().err


def test_annotate_json_gives_the_text_its_offsets_point_into(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text is annotated cleaned (NFC, no bidi controls, trimmed): the JSON gives that text,
    so ``text[start:end]`` is each mention's text."""
    raw = " \u200fבר\u200e Bru\u0308cke "   # RLM/LRM marks and a decomposed ü
    code, out, err = run(capsys, store, "annotate", "--json", "--no-record", raw)
    ann = json.loads(out)
    assert code == 0, err
    assert ann["text"] == "בר Br\u00fccke" and ann["mentions"]
    for m in ann["mentions"]:
        assert ann["text"][m["start"]:m["end"]] == m["text"]
