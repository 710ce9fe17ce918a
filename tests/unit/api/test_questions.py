"""Recorded questions: listing them and forgetting them (API and CLI)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.namespaces import DECISIONS_GRAPH
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
Q1 = "הפירות העמיסו על הבדים"
Q2 = "הגבר קרא בקול עם הזריחה"


def demo_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def test_questions_are_listed_newest_first_and_forgotten_by_age_or_iri() -> None:
    kg = demo_kg()
    a1 = kg.ask(Q1, lang="he")
    a2 = kg.ask(Q2, lang="he")
    qs = kg.questions()
    assert [q["iri"] for q in qs] == [a2.question_iri, a1.question_iri]
    assert qs[0]["text"] == Q2 and qs[0]["lang"] == "he"
    decisions = kg.store.select("select-named-graphs")
    n_decisions = {r["g"].value: int(r["n"].value) for r in decisions}[DECISIONS_GRAPH.value]
    # nothing is older than an hour ago
    assert kg.forget_questions(older_than=datetime.now(timezone.utc) - timedelta(hours=1)) == 0
    assert kg.forget_questions(iris=[a1.question_iri, "https://example.org/not-a-question"]) == 1
    assert [q["iri"] for q in kg.questions()] == [a2.question_iri]
    assert kg.forget_questions(older_than=datetime.now(timezone.utc) + timedelta(seconds=1)) == 1
    assert kg.questions() == []
    # the decisions stay (documents and a repeated question reuse them)
    after = {r["g"].value: int(r["n"].value) for r in kg.store.select("select-named-graphs")}
    assert after[DECISIONS_GRAPH.value] == n_decisions
    with pytest.raises(InputError, match="time zone"):
        kg.forget_questions(older_than=datetime.now())


def test_cli_lists_and_forgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["--store", str(store), "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")]) == 0
    assert main(["--store", str(store), "ask", Q1, "--lang", "he", "--json"]) == 0
    capsys.readouterr()
    assert main(["--store", str(store), "questions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [q["text"] for q in listed] == [Q1]
    assert main(["--store", str(store), "forget-questions", "--older-than", "1"]) == 0
    assert "forgot 0 questions" in capsys.readouterr().out
    assert main(["--store", str(store), "forget-questions", "--older-than", "-1"]) != 0
    assert "--older-than" in capsys.readouterr().err
    assert main(["--store", str(store), "forget-questions", "--all"]) == 0
    assert "forgot 1 question" in capsys.readouterr().out
    assert main(["--store", str(store), "questions"]) == 0
    assert capsys.readouterr().out == ""
