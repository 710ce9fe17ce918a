"""``WsdMode``: the one list of sense selection modes, parsed at the edges (API, CLI, settings),
and the two bugs of the bare-string mode: a typo was a server fault, ``NONE`` left documents
undecided."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from kg_rag import ConfigError, InputError, KnowledgeGraph, WsdMode, load_settings
from kg_rag.cli import main
from kg_rag.namespaces import DECISIONS_GRAPH
from kg_rag.pipeline import record
from kg_rag.resources import resource_path
from kg_rag.senses.baselines import FirstSenseSelector, RandomSelector
from kg_rag.senses.factory import make_selector
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.serialize import answer_dict
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
QUESTION = "הפירות העמיסו על הבדים"
ALL = ["none", "knowledge", "llm", "llm,knowledge", "knowledge+llm", "first-sense", "random"]


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings())
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def test_the_modes_and_their_values() -> None:
    assert [m.value for m in WsdMode] == ALL
    assert WsdMode.names() == ", ".join(ALL)


@pytest.mark.parametrize("text, mode", [
    ("knowledge", WsdMode.KNOWLEDGE), ("  KNOWLEDGE ", WsdMode.KNOWLEDGE), ("None", WsdMode.NONE),
    ("LLM, Knowledge", WsdMode.LLM_KNOWLEDGE), ("first-sense", WsdMode.FIRST_SENSE),
    (WsdMode.RANDOM, WsdMode.RANDOM), ("Knowledge+LLM", WsdMode.KNOWLEDGE_LLM),
    ("knowledge llm", WsdMode.KNOWLEDGE_LLM),   # "+" decoded as a space from a query string
])
def test_parse_ignores_case_and_spaces(text: str | WsdMode, mode: WsdMode) -> None:
    assert WsdMode.parse(text) is mode


@pytest.mark.parametrize("bad", ["bogus", "", "first sense x", "llm;knowledge", None, 3])
def test_parse_refuses_anything_else_naming_the_modes(bad: object) -> None:
    with pytest.raises(InputError, match="unknown sense selection mode") as e:
        WsdMode.parse(bad)
    assert all(m in str(e.value) for m in ALL)


def test_settings_read_the_mode_and_a_typo_is_a_config_error() -> None:
    assert load_settings({}).wsd is WsdMode.KNOWLEDGE
    assert load_settings({"KG_RAG_WSD": " First-Sense "}).wsd is WsdMode.FIRST_SENSE
    with pytest.raises(ConfigError, match="KG_RAG_WSD='knowlege' is not a valid value; use one of none"):
        load_settings({"KG_RAG_WSD": "knowlege"})


def test_each_mode_makes_its_selector() -> None:
    store = EmbeddedStore(":memory:")
    assert make_selector(WsdMode.NONE, store, Settings()) is None
    assert isinstance(make_selector(WsdMode.KNOWLEDGE, store, Settings()), KnowledgeSelector)
    assert isinstance(make_selector(WsdMode.FIRST_SENSE, store, Settings()), FirstSenseSelector)
    assert isinstance(make_selector(WsdMode.RANDOM, store, Settings()), RandomSelector)
    with pytest.raises(ConfigError):  # no API key: the LLM modes say so
        make_selector(WsdMode.LLM, store, Settings(llm_api_key=None))


def test_question_iri_hashes_the_value_as_before() -> None:
    # the IRI of a question asked with the plain string "llm,knowledge" before the enum
    old = hashlib.sha256(b"".join(p.encode() + b"\x1f" for p in (QUESTION, "he", "llm,knowledge")))
    iri = record.question_iri(QUESTION, "he", WsdMode.LLM_KNOWLEDGE).value
    assert iri == "https://w3id.org/kg-rag/id/question/" + old.hexdigest()[:32]
    assert iri.endswith("405258be592485c1677eb76fd10a4a2e")


def test_ask_with_a_typo_is_bad_input_not_a_server_fault(kg: KnowledgeGraph) -> None:
    with pytest.raises(InputError, match="unknown sense selection mode 'bogus'") as e:
        kg.ask(QUESTION, lang="he", wsd="bogus")
    assert e.value.http_status == 400 and e.value.exit_code == 2
    with pytest.raises(InputError, match="sense selection mode"):
        kg.annotate(QUESTION, lang="he", wsd="bogus")
    with pytest.raises(InputError, match="sense selection mode"):
        kg.index_documents([], wsd="bogus")


def test_answer_carries_the_mode_and_serialises_its_value(kg: KnowledgeGraph) -> None:
    a = kg.ask(QUESTION, lang="he", wsd=" Knowledge ")
    assert a.wsd is WsdMode.KNOWLEDGE
    assert a.question_iri == record.question_iri(QUESTION, "he", WsdMode.KNOWLEDGE).value
    out = answer_dict(a)["wsd"]
    assert out == "knowledge" and type(out) is str
    assert kg.ask(QUESTION, lang="he").wsd is kg.settings.wsd  # None: the setting


def _decisions(kg: KnowledgeGraph) -> int:
    rows = kg.store.select("select-named-graphs")
    return {r["g"].value: int(r["n"].value) for r in rows}.get(DECISIONS_GRAPH.value, 0)


def test_documents_indexed_with_none_in_any_case_are_still_decided(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings())
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    (tmp_path / "d1.txt").write_text(QUESTION + "\n", encoding="utf-8")
    assert _decisions(kg) == 0
    rep = kg.index([tmp_path], lang="he", wsd="NONE")
    assert rep.documents == 1 and rep.ambiguous >= 1 and rep.decided >= 1
    assert _decisions(kg) > 0
    ask = kg.ask(QUESTION, lang="he", wsd="none")  # none still means label matching for questions
    assert ask.wsd is WsdMode.NONE and all(m.selection is None for m in ask.mentions)


@pytest.mark.parametrize("argv", [["ask", QUESTION], ["annotate", QUESTION], ["index", "x"],
                                  ["demo"], ["eval", "wsd", "--data", "d", "--gold", "g"],
                                  ["eval", "retrieval", "folder"]])
def test_cli_refuses_a_typo_with_exit_2_naming_the_modes(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--store", ":memory:", *argv, "--wsd", "knowlege"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "argument --wsd: unknown sense selection mode 'knowlege'" in err and "first-sense" in err


def test_cli_parses_the_mode_and_eval_wsd_refuses_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", ":memory:", "annotate", "no words here", "--wsd", "NONE", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mentions"] == []
    code = main(["--store", ":memory:", "eval", "wsd", "--data", "d", "--gold", "g", "--wsd", "none"])
    assert code == 2 and "scores a sense selector" in capsys.readouterr().err
