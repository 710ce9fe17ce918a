"""The rich prompt (``KG_RAG_LLM_PROMPT=wsd-rich-v1``) end to end on the demo: documents indexed
offline, re-decided by the real ``openai`` client against the loopback server. What the server
received carries each sense's definitions, examples, translations, labels in other languages,
register labels, the concept's broader concept and thesaurus, and the sentences around the
mention; the scripted answer is parsed and written with its provenance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import ConfigError
from kg_rag.namespaces import KGR, PROV
from kg_rag.resources import resource_path
from kg_rag.senses.llm.prompt import prompt_sha256
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore, open_store
from tests.support.llm_server import KEY, LlmServer, choose, llm_env, mention_blocks

DEMO = resource_path("demo")
CLI = "import sys; from kg_rag.cli import main; sys.exit(main(sys.argv[1:]))"
DOCS = ("he-poem-fig", "he-rooster-talmud")


def corpus(tmp: Path) -> Path:
    rows = [json.loads(line) for line in (DEMO / "documents" / "corpus.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    path = tmp / "docs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows
                            if r["id"] in DOCS), encoding="utf-8")
    return path


def one(kg: KnowledgeGraph, iri: str, prop: NamedNode) -> str:
    values = [t.object.value for t in kg.store.construct("construct-resource",
                                                          bind={"root": NamedNode(iri)})
              if t.predicate == prop]
    assert len(values) == 1, (iri, prop, values)
    return str(values[0])


def sense_line(user: str, surface: str, needle: str) -> str:
    for text, senses in mention_blocks(user).values():
        if text == surface:
            return next(line for line in senses if needle in line)
    raise AssertionError(f"no mention {surface!r} in the prompt")


def context_line(user: str, mid: str) -> str:
    block = next(c for c in user.split("\n\n") if c.lstrip().startswith(mid + " ")
                 or f"\n{mid} " in c)
    line = next(x for x in block.splitlines() if x.startswith("context: "))
    return str(json.loads(line[len("context: "):]))


def test_rich_prompt_carries_the_entry_and_the_answer_is_recorded(tmp_path: Path) -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings())
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    kg.index([corpus(tmp_path)], wsd="knowledge")
    with LlmServer(choose({"גבר": "rooster", "בדיו": "leaves", "בדים": "leaves"})) as srv:
        rich = KnowledgeGraph(kg.store, Settings(
            llm_base_url=srv.url, llm_api_key=KEY, llm_model="test-model", llm_timeout=5.0,
            llm_prompt="wsd-rich-v1"))
        rep = rich.redecide("llm")
        sent = list(srv.chat_requests)
        usages = list(srv.usages)
    assert len(sent) == 1 == rep.llm_calls                    # both documents' words, one request
    fig = rooster = sent[0]
    assert "under = the broader concept" in rooster.system

    # every kind of evidence of the rooster sense of גבר, from the demo's files
    line = sense_line(rooster.user, "גבר", "rooster")
    assert line.startswith("S2 [rare] ")                                      # register label
    assert 'note@en "rabbinic (Talmudic) usage' in line                       # and usage note
    assert 'def@en "A rooster, the male of the domestic chicken' in line      # dictionary definition
    assert 'def@he "תרנגול, זכר העוף' in line                                  # and in Hebrew
    assert 'ex@he "במשנה נקבעו זמני העבודה במקדש לפי קריאת הגבר."' in line    # usage example
    assert 'ex@en "In the Mishnah the times of the Temple service' in line    # its translation
    assert 'tr@en "rooster"' in line and 'tr@de "Hahn"' in line               # translation equivalents
    assert 'under@en "farm animal"' in line                                   # the broader concept
    assert 'in "kg-rag demo thesaurus"' in line                               # the thesaurus
    assert 'lbl@de "Gockel"' in line and 'lbl@en "cock; cockerel"' in line    # synonyms, other languages
    man = sense_line(rooster.user, "גבר", "adult")
    assert 'under@en "person"' in man and not man.startswith("S1 [")
    # context: the mention's sentence and the one after it, not the third
    ids = {text: mid for mid, (text, _) in mention_blocks(rooster.user).items()}
    ctx = context_line(rooster.user, ids["גבר"])
    assert "⟦גבר⟧" in ctx and "בברכות השחר מברכים על השכוי" in ctx
    assert "בחצרות הכפר" not in ctx
    # the second בד of the poem: the two sentences before it are there
    blocks = {text: mid for mid, (text, _) in mention_blocks(fig.user).items()}
    ctx2 = context_line(fig.user, blocks["בדים"])
    assert "בשיר הישן מתואר עץ תאנה" in ctx2 and "בדיו הרחבים נטויים" in ctx2 and "⟦בדים⟧" in ctx2

    # the answers, parsed and written with their provenance
    for item in rep.items:
        assert item.written and item.selector == "llm"
        req, usage = sent[0], usages[0]
        assert one(rich, item.decision, KGR.promptTemplate) == "wsd-rich-v1"
        assert one(rich, item.decision, KGR.promptSha256) == prompt_sha256(req.body["messages"])
        assert one(rich, item.decision, KGR.tokensIn) == str(usage["prompt_tokens"])
        assert one(rich, item.decision, KGR.tokensOut) == str(usage["completion_tokens"])
        assert one(rich, item.decision, KGR.rationale).endswith("fits the context.")
        agent = one(rich, item.decision, PROV.wasAssociatedWith)
        assert one(rich, agent, KGR.version) == "wsd-rich-v1"
        assert one(rich, agent, KGR.model) == "test-model"
    chosen = {i.text: i.new_concept for i in rep.items}
    assert chosen["גבר"].endswith("/rooster") and chosen["בדיו"].endswith("/branch")  # type: ignore[union-attr]


def test_unknown_template_is_a_config_error() -> None:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), Settings(llm_api_key=KEY, llm_prompt="wsd-v9"))
    with pytest.raises(ConfigError, match="KG_RAG_LLM_PROMPT='wsd-v9' is no prompt template; use one of wsd-v1, wsd-rich-v1"):
        kg.selector("llm")


def test_cli_index_with_the_rich_prompt(tmp_path: Path) -> None:
    import gc

    store = tmp_path / "store"
    with KnowledgeGraph(open_store(str(store)), Settings(store=str(store))) as kg:
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    del kg
    gc.collect()  # the store's lock goes with the last reference
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_RAG_", "OPENAI_"))}
    with LlmServer(choose({"גבר": "rooster"})) as srv:
        proc = subprocess.run([sys.executable, "-c", CLI, "--store", str(store), "index",
                               str(corpus(tmp_path)), "--wsd", "llm", "--json"],
                              env=env | llm_env(srv, KG_RAG_LLM_PROMPT="wsd-rich-v1"),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert srv.chat_requests and all("in \"kg-rag demo thesaurus\"" in r.user
                                         for r in srv.chat_requests)
