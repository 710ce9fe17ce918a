"""End to end: demo vocabularies + loopback LLM → `kg-rag ask --wsd llm` → PROV-O decisions.

The CLI runs as a real subprocess whose environment points it at the loopback server; the
store holds the demo thesaurus and dictionary (documents are not needed for the decisions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.resources import resource_path
from kg_rag.senses.llm.prompt import prompt_sha256
from kg_rag.settings import Settings
from kg_rag.store import open_store
from tests.support.llm_server import KEY, LlmServer, answer, choose, llm_env

BAD_Q = "הפירות העמיסו על הבדים"    # paper example 1: בד, fabric / branch
ROOSTER_Q = "הגבר קרא בקול עם הזריחה"
CLI = "import sys; from kg_rag.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = resource_path("demo")
    path = tmp_path_factory.mktemp("llm-e2e") / "store"
    with KnowledgeGraph(open_store(str(path)), Settings(store=str(path))) as kg:
        kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    return path


def kg_rag(store: Path, srv: LlmServer, *args: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KG_RAG_", "OPENAI_"))} | llm_env(srv)
    proc = subprocess.run([sys.executable, "-c", CLI, "--store", str(store), *args],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert KEY not in proc.stdout and KEY not in proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def ambiguous(answer_doc: dict[str, object]) -> dict[str, object]:
    mentions = answer_doc["mentions"]
    assert isinstance(mentions, list)
    return next(m for m in mentions if m["ambiguous"])


def test_ask_with_llm_records_provenance_and_is_reused(demo_store: Path) -> None:
    with LlmServer(choose({"הבדים": "branch"})) as srv:
        first = kg_rag(demo_store, srv, "ask", BAD_Q, "--lang", "he", "--wsd", "llm", "--json")
        assert len(srv.chat_requests) == 1
        m = ambiguous(first)
        assert m["chosen"]["concept"].endswith("/branch") and not m["reused"]  # type: ignore[index]
        assert first["llm"] == {"calls": 1, "tokens_in": first["llm"]["tokens_in"],  # type: ignore[index]
                                "tokens_out": first["llm"]["tokens_out"]}  # type: ignore[index]
        sent = srv.chat_requests[0]
        prompt_hash = prompt_sha256(sent.body["messages"])

        again = kg_rag(demo_store, srv, "ask", BAD_Q, "--lang", "he", "--wsd", "llm", "--json")
        assert len(srv.chat_requests) == 1            # asking again made no request
        assert ambiguous(again)["reused"] is True
        assert again["llm"]["calls"] == 0             # type: ignore[index]

        ex = kg_rag(demo_store, srv, "explain", str(m["decision"]), "--json")
    decision = ex["mentions"][0]["decision"]          # type: ignore[index]
    assert decision["selector"]["model"] == "test-model"
    assert decision["selector"]["endpoint_host"] == "127.0.0.1"
    assert decision["llm"]["template"] == "wsd-v1"
    assert decision["llm"]["prompt_sha256"] == prompt_hash
    assert decision["llm"]["tokens_in"] == first["llm"]["tokens_in"] > 0  # type: ignore[index]
    assert decision["llm"]["tokens_out"] > 0


def test_id_outside_the_candidates_chooses_nothing_and_explain_says_why(demo_store: Path) -> None:
    config = Settings(store=str(demo_store), llm_api_key=KEY, llm_model="test-model")
    with LlmServer(answer(("M1", "S9"))) as srv:
        with KnowledgeGraph(open_store(str(demo_store)),
                            config.with_(llm_base_url=srv.url)) as kg:
            a = kg.ask(ROOSTER_Q, lang="he", wsd="llm")
            report = next(r for r in a.mentions if r.mention.ambiguous)
            assert report.selection is not None and report.selection.chosen is None
            assert len(srv.chat_requests) == 2        # the request and its one retry
            assert report.decision is not None
            text = kg.explain(report.decision).text()
    assert "unresolved" in text
    assert '"S9" is not one of M1' in text


def test_a_decision_the_llm_failed_is_asked_again_and_its_answer_revises_it(tmp_path: Path) -> None:
    """An invalid answer twice leaves the mention unresolved, and a fallback's choice stands in
    for the LLM's: neither is reused for ever. The next ask asks again, and its answer is written
    as a revision of the stand-in, which asking follows from then on (no request after that)."""
    demo = resource_path("demo")
    store = open_store(str(tmp_path / "store"))
    config = Settings(store=str(tmp_path / "store"), llm_api_key=KEY, llm_model="test-model")
    KnowledgeGraph(store, config).load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    for mode, expect_first in (("llm", None), ("llm,knowledge", "rooster")):
        q = ROOSTER_Q if mode == "llm" else "הגבר קרא בקול"   # its own question per mode
        with LlmServer([answer(("M1", "S9")), answer(("M1", "S9")), choose({"הגבר": "rooster"})]) as srv:
            kg = KnowledgeGraph(store, config.with_(llm_base_url=srv.url))
            first = next(r for r in kg.ask(q, lang="he", wsd=mode).mentions if r.mention.ambiguous)
            assert first.selection is not None
            got = first.selection.chosen.concept.rsplit("/", 1)[-1] if first.selection.chosen else None
            assert got == expect_first and len(srv.chat_requests) == 2
            second = next(r for r in kg.ask(q, lang="he", wsd=mode).mentions if r.mention.ambiguous)
            assert len(srv.chat_requests) == 3 and not second.reused      # asked again
            assert second.selection is not None and second.selection.chosen is not None
            assert second.selection.chosen.concept.endswith("/rooster")
            assert second.decision != first.decision
            third = next(r for r in kg.ask(q, lang="he", wsd=mode).mentions if r.mention.ambiguous)
            assert len(srv.chat_requests) == 3 and third.reused               # the revision stands
            assert third.decision == second.decision


def test_every_request_to_the_llm_is_counted(tmp_path: Path) -> None:
    """An invalid answer and its retry are two calls, whichever mode: with ``llm,knowledge`` the
    fallback's decision keeps the LLM's trace (the requests it stands in for)."""
    demo = resource_path("demo")
    store = open_store(str(tmp_path / "store"))
    config = Settings(store=str(tmp_path / "store"), llm_api_key=KEY, llm_model="test-model")
    KnowledgeGraph(store, config).load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    for mode in ("llm", "llm,knowledge"):
        with LlmServer(answer(("M1", "S9"))) as srv:
            kg = KnowledgeGraph(store, config.with_(llm_base_url=srv.url))
            a = kg.ask(ROOSTER_Q if mode == "llm" else "הגבר קרא בקול", lang="he", wsd=mode)
            assert len(srv.chat_requests) == 2
            assert a.llm_calls == 2 and a.tokens_in > 0, mode
