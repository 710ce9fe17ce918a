"""``kg-rag eval wsd --wsd llm`` (and ``knowledge+llm``) against the scripted loopback server: the
run record's token counts are what the server sent in ``usage``; a model worse than the first
sense is refused as the store's default with both scores in one line ("never worse than the
prior"); bad options write nothing."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.senses.llm.prompt import TEMPLATE, template_sha256
from kg_rag.senses.mode import WsdMode
from kg_rag.senses.store_default import read_default
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.llm_server import KEY, LlmServer, Reply, answer, llm_env
from tests.support.senses_fixture import DATA, load_fixture

CORPUS = DATA / "wsd-tiny.data.xml"
GOLD = DATA / "wsd-tiny.gold.key.txt"


def right_model(body: dict[str, Any]) -> Reply:
    """The tiny corpus' two ambiguous "bank"s: money in the text that deposits it, else river."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return answer(("M1", "S1" if "deposited" in user else "S2"))


def wrong_model(body: dict[str, Any]) -> Reply:
    """Wrong on both — worse than the first sense, which gets the money bank right."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return answer(("M1", "S2" if "deposited" in user else "S1"))


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from kg_rag.settings import settings

    for k in list(__import__("os").environ):
        if k.startswith(("KG_RAG_", "OPENAI_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with EmbeddedStore(path) as s:
        load_fixture(s)
    del s
    gc.collect()
    return path


def run(store: Path, srv: LlmServer, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    from kg_rag.settings import settings

    for k, v in llm_env(srv).items():
        monkeypatch.setenv(k, v)
    settings.cache_clear()
    code = main(["--store", str(store), "eval", "wsd", "--data", str(CORPUS), "--gold", str(GOLD),
                 *args])
    gc.collect()
    return code


def test_the_run_record_counts_what_the_server_sent(store_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs" / "llm.json"
    out.parent.mkdir()
    with LlmServer(right_model) as srv:
        code = run(store_dir, srv, monkeypatch, "--wsd", "llm", "--run-record", str(out),
                   "--price-in", "2.5", "--price-out", "10", "--json")
        assert code == 0
        sent_in = sum(u["prompt_tokens"] for u in srv.usages)
        sent_out = sum(u["completion_tokens"] for u in srv.usages)
        n_requests = len(srv.chat_requests)
    report = json.loads(capsys.readouterr().out)
    text = out.read_text(encoding="utf-8")
    assert KEY not in text and "/v1" not in text           # no key, no endpoint path
    rec = json.loads(text)
    assert report["run_record"] == str(out)
    assert rec["selector"]["model"] == "test-model" and rec["selector"]["endpoint_host"] == "127.0.0.1"
    assert rec["prompt"] == {"template": TEMPLATE, "sha256": template_sha256()}
    assert len(rec["prompt"]["sha256"]) == 64
    llm = rec["llm"]
    assert n_requests == 2 and llm["requests"] == n_requests          # one per ambiguous bank
    assert (llm["tokens_in"], llm["tokens_out"]) == (sent_in, sent_out) and sent_in > 0
    assert sum(r["tokens_in"] for r in rec["requests"]) == sent_in
    assert sum(i.get("tokens_in", 0) for i in rec["items"]) == sent_in
    assert sum(i.get("tokens_out", 0) for i in rec["items"]) == sent_out
    assert report["llm"]["calls_per_1000_mentions"] == llm["calls_per_1000_mentions"] == 250.0
    assert rec["context_window"] == {"sentences_each_side": 1,
                                     "max_prompt_tokens": max(u["prompt_tokens"] for u in srv.usages)}
    assert llm["cost"]["total"] == pytest.approx(sent_in * 2.5e-6 + sent_out * 10e-6)
    assert llm["latency_ms"]["total"] > 0
    # per item: id, chosen key, gold, right; the LLM's decided with their request's hash
    items = {i["instance"]: i for i in rec["items"]}
    assert len(items) == report["n"] == 8
    bank = items["t0.s0.i2"]
    assert bank["chosen"] == "bank%1:17:01::" and bank["gold"] == ["bank%1:17:01::"]
    assert bank["right"] is True and bank["agent"] == "llm" and len(bank["prompt_sha256"]) == 64
    assert bank["request_latency_ms"] > 0 and bank["cost"] > 0
    assert items["t1.s1.i1"]["chosen"] is None and items["t1.s1.i1"]["right"] is False  # zebra
    assert rec["scores"]["system"]["f1"] > rec["scores"]["first-sense"]["f1"]


def test_default_places_of_the_run_record(store_dir: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with LlmServer(right_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", "llm") == 0
        assert "run record: wsd-run-tiny-llm-" in capsys.readouterr().out
        made = list(tmp_path.glob("wsd-run-tiny-llm-*.json"))
        assert len(made) == 1 and json.loads(made[0].read_text())["selector"]["mode"] == "llm"
        pred = tmp_path / "out.key.txt"
        assert run(store_dir, srv, monkeypatch, "--wsd", "llm", "--predictions", str(pred)) == 0
        assert (tmp_path / "out.run.json").is_file() and pred.is_file()
        # the knowledge selector alone writes none unless asked
        assert run(store_dir, srv, monkeypatch, "--wsd", "knowledge") == 0
        assert len(list(tmp_path.glob("wsd-run-*.json"))) == 1


def test_knowledge_llm_run_record_says_what_was_sent(store_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kl.json"
    with LlmServer(right_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", "knowledge+llm", "--threshold", "0.75",
                   "--run-record", str(out)) == 0
        n_requests = len(srv.chat_requests)
        sent_in = sum(u["prompt_tokens"] for u in srv.usages)
    table = capsys.readouterr().out
    rec = json.loads(out.read_text())
    asked = [i for i in rec["items"] if i.get("asked_llm")]
    assert rec["selector"]["threshold"] == 0.75 and rec["selector"]["name"] == "knowledge+llm"
    assert all(i["knowledge_probability"] < 0.75 for i in asked)
    assert all(i["knowledge_probability"] >= 0.75 for i in rec["items"]
               if i.get("asked_llm") is False and i["candidates"] > 1)
    assert len(asked) == n_requests and rec["llm"]["requests"] == n_requests
    assert rec["llm"]["tokens_in"] == sent_in
    assert "at threshold 0.75, " in table and "← in use" in table
    assert "go to the LLM; the knowledge selector is right on" in table
    assert f"LLM: {n_requests} request(s) for 8 mentions" in table


def test_a_model_worse_than_the_first_sense_is_refused_as_the_default(
        store_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    with LlmServer(wrong_model) as srv:
        code = run(store_dir, srv, monkeypatch, "--wsd", "llm", "--set-default", "--json",
                   "--run-record", str(tmp_path / "r.json"))
    captured = capsys.readouterr()
    report = json.loads(captured.out)                  # the scores are still shown
    f1, first = report["f1"], report["baselines"]["first-sense"]["f1"]
    assert f1 < first
    err = captured.err.strip()
    assert code == 3 and len(err.splitlines()) == 1
    assert f"F1 {100 * f1:.1f}" in err and f"first-sense baseline's {100 * first:.1f}" in err
    assert "test-model" in err and "--force" in err
    with EmbeddedStore(store_dir) as s:
        assert read_default(s) is None                # nothing was changed
    del s
    gc.collect()
    # forced: recorded as such, and then the store's default
    with LlmServer(wrong_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", "llm", "--set-default", "--force",
                   "--run-record", str(tmp_path / "r.json")) == 0
    assert "forced" in capsys.readouterr().err
    with EmbeddedStore(store_dir) as s:
        rec = read_default(s)
        assert rec is not None and rec.mode is WsdMode.LLM and rec.forced
        assert rec.f1 == pytest.approx(f1, abs=1e-4) and rec.first_sense_f1 == pytest.approx(first, abs=1e-4)
        assert rec.model == "test-model" and rec.endpoint_host == "127.0.0.1"
        assert KnowledgeGraph(s, Settings()).mode() is WsdMode.LLM
        assert KnowledgeGraph(s, Settings()).mode("knowledge") is WsdMode.KNOWLEDGE  # explicit wins


def test_a_model_at_least_as_good_becomes_the_default(store_dir: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with LlmServer(right_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", "knowledge+llm", "--set-default",
                   "--run-record", str(tmp_path / "r.json")) == 0
    err = capsys.readouterr().err
    assert "store default set: knowledge+llm (test-model at 127.0.0.1): F1 " in err
    with EmbeddedStore(store_dir) as s:
        rec = read_default(s)
        assert rec is not None and rec.mode is WsdMode.KNOWLEDGE_LLM and not rec.forced
        assert rec.f1 >= rec.first_sense_f1 and rec.corpus == "tiny" and rec.instances == 8


@pytest.mark.parametrize("args, message", [
    (["--price-in", "1"], "give both --price-in and --price-out"),
    (["--price-in", "1", "--price-out", "-2"], "--price-out must be a price of 0 or more"),
    (["--run-record", "no/such/folder/run.json"], "does not exist"),
    (["--force"], "--force only goes with --set-default"),
    (["--threshold", "1.5"], "--threshold must be a probability from 0 to 1"),
])
def test_bad_options_are_one_line_errors_and_write_nothing(
        store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    with LlmServer(right_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", "llm", *args) == 2
        assert srv.chat_requests == []
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not list(tmp_path.glob("**/*.json"))


@pytest.mark.parametrize("mode", ["llm", "knowledge+llm"])
def test_the_run_record_names_the_rich_template_and_its_cost(store_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             mode: str) -> None:
    from kg_rag.senses.llm.prompt import RICH_TEMPLATE

    monkeypatch.setenv("KG_RAG_LLM_PROMPT", RICH_TEMPLATE)
    monkeypatch.setenv("KG_RAG_LLM_THRESHOLD", "1")   # knowledge+llm: every unsure bank is sent
    out = tmp_path / "rich.json"
    with LlmServer(right_model) as srv:
        assert run(store_dir, srv, monkeypatch, "--wsd", mode, "--run-record", str(out)) == 0
        sent = list(srv.chat_requests)
        sent_in = sum(u["prompt_tokens"] for u in srv.usages)
    assert sent and all("under = the broader concept" in r.system for r in sent)
    rec = json.loads(out.read_text(encoding="utf-8"))
    assert rec["prompt"] == {"template": RICH_TEMPLATE, "sha256": template_sha256(RICH_TEMPLATE)}
    assert rec["prompt"]["sha256"] != template_sha256(TEMPLATE)
    assert RICH_TEMPLATE in rec["selector"]["version"]
    assert rec["llm"]["tokens_in"] == sent_in
    assert {r["template"] for r in rec["requests"]} == {RICH_TEMPLATE}
