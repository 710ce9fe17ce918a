"""``kg-rag ask --wsd knowledge+llm`` on the demo, as a subprocess pointed at the loopback server:
no request when every decision is confident, exactly the unsure mentions otherwise (the server's
request log), the agent and reason of each decision recorded; ``index`` reports LLM calls per
1,000 mentions. The English contextual signal is off here (``KG_RAG_CONTEXT_ENCODER=0``): with it
the demo's English words are all decided with ≥ 0.88, and these tests need unsure ones."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.resources import resource_path
from kg_rag.senses.selective import probability
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore, open_store
from tests.support.llm_server import KEY, LlmServer, Reply, choose, llm_env, mention_blocks

DEMO = resource_path("demo")
CLI = "import sys; from kg_rag.cli import main; sys.exit(main(sys.argv[1:]))"
HAHN = "Warum kräht der Hahn schon vor Sonnenaufgang?"                            # one confident word
BRANCH = "Which branch of the bank can help me open an account with foreign papers?"  # two words


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("selective") / "store"
    with KnowledgeGraph(open_store(str(path)), Settings(store=str(path))) as kg:
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return path


@pytest.fixture(scope="module")
def knowledge() -> KnowledgeGraph:
    """The demo in memory, for the knowledge selector's own probabilities."""
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(context_encoder=False))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def knowledge_probabilities(kg: KnowledgeGraph, question: str, lang: str) -> dict[str, float]:
    out = {}
    for r in kg.annotate(question, lang=lang, wsd="knowledge"):
        if r.selection is not None:
            p = probability(r.selection)
            assert p is not None
            out[r.mention.text] = p
    return out


def kg_rag(store: Path, srv: LlmServer, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KG_RAG_", "OPENAI_"))}
    proc = subprocess.run([sys.executable, "-c", CLI, "--store", str(store), *args],
                          env=base | llm_env(srv) | {"KG_RAG_CONTEXT_ENCODER": "0"} | env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert KEY not in proc.stdout and KEY not in proc.stderr
    return proc


def asked(srv: LlmServer) -> list[str]:
    return [s for r in srv.chat_requests for s, _ in mention_blocks(r.user).values()]


def test_no_request_when_every_decision_is_above_the_threshold(demo_store: Path,
                                                               knowledge: KnowledgeGraph) -> None:
    probs = knowledge_probabilities(knowledge, HAHN, "de")
    assert probs and min(probs.values()) >= 0.7
    with LlmServer(Reply(status=500)) as srv:   # any request would fail loudly
        doc = json.loads(kg_rag(demo_store, srv, "ask", HAHN, "--lang", "de",
                                "--wsd", "knowledge+llm", "--json",
                                KG_RAG_LLM_THRESHOLD="0.7").stdout)
        assert srv.requests == []
    assert doc["wsd"] == "knowledge+llm" and doc["llm"]["calls"] == 0
    m = next(m for m in doc["mentions"] if m["ambiguous"])
    assert m["selector"]["name"] == "knowledge"
    assert "≥ 0.7: the LLM was not asked" in m["reason"]
    assert m["chosen"]["concept"].endswith("/rooster")


@pytest.mark.parametrize("threshold", ["0.8", "0.95"])
def test_exactly_the_unsure_mentions_are_sent(demo_store: Path, knowledge: KnowledgeGraph,
                                              threshold: str) -> None:
    probs = knowledge_probabilities(knowledge, BRANCH, "en")
    unsure = sorted(w for w, p in probs.items() if p < float(threshold))
    assert unsure, "the demo question must have an unsure word at this threshold"
    if threshold == "0.8":
        assert len(unsure) < len(probs)         # and a confident one that is not sent
    with LlmServer(choose({"branch": "local office or shop", "bank": "financial"})) as srv:
        doc = json.loads(kg_rag(demo_store, srv, "ask", BRANCH, "--lang", "en",
                                "--wsd", "knowledge+llm", "--json",
                                KG_RAG_LLM_THRESHOLD=threshold).stdout)
        assert len(srv.chat_requests) == 1      # the unsure mentions of a question: one request
        assert sorted(asked(srv)) == unsure
        sent_usage = srv.usages[0]
    assert doc["llm"] == {"calls": 1, "tokens_in": sent_usage["prompt_tokens"],
                          "tokens_out": sent_usage["completion_tokens"]}
    by_word = {m["text"]: m for m in doc["mentions"] if m["ambiguous"]}
    for word, m in by_word.items():
        if word in unsure:
            assert m["selector"]["name"] == "llm" and "decided by llm" in m["reason"]
        else:
            assert m["selector"]["name"] == "knowledge" and "not asked" in m["reason"]
    assert by_word["branch"]["chosen"]["concept"].endswith("/branch-office")


def test_a_failing_llm_leaves_the_knowledge_decisions_recorded_as_such(
        demo_store: Path, knowledge: KnowledgeGraph) -> None:
    q = "Why did the bank of the river collapse after the floods?"
    assert max(knowledge_probabilities(knowledge, q, "en").values()) < 0.8
    with LlmServer(Reply(status=503)) as srv:
        doc = json.loads(kg_rag(demo_store, srv, "ask", q, "--lang", "en", "--wsd",
                                "knowledge+llm", "--json", KG_RAG_LLM_RETRIES="0").stdout)
        assert len(srv.chat_requests) == 1
        m = next(m for m in doc["mentions"] if m["ambiguous"])
        assert m["selector"]["name"] == "knowledge" and m["chosen"] is not None
        assert "HTTP 503" in m["reason"] and m["reason"].endswith("the knowledge decision stands")
        ex = json.loads(kg_rag(demo_store, srv, "explain", m["decision"], "--json").stdout)
    decision = ex["mentions"][0]["decision"]
    assert decision["selector"]["label"] == "kg-rag knowledge selector"
    assert "the knowledge decision stands" in decision["reason"]


def test_index_reports_llm_calls_per_1000_mentions(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with KnowledgeGraph(open_store(str(store)), Settings(store=str(store))) as kg:
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    del kg
    gc.collect()  # the store's lock goes with the last reference
    with LlmServer(choose({})) as srv:
        out = kg_rag(store, srv, "index", str(DEMO / "documents" / "orchard-calendar.md"),
                     "--wsd", "knowledge+llm", KG_RAG_LLM_THRESHOLD="1").stdout
        calls = len(srv.chat_requests)
    assert calls >= 1 and (f"; {calls} LLM calls (" in out or (calls == 1 and "; 1 LLM call (" in out)) and "per 1,000 mentions)" in out
