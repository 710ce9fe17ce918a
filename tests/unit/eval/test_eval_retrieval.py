"""eval retrieval on a small hand-written BEIR folder over the demo vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.eval.retrieval import evaluate_retrieval, ndcg_at, read_beir, score_run
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")

CORPUS = [
    ("c1", "The branches of the apple tree bent under the weight of the fruit."),
    ("c2", "She cut the fabric and sewed a summer dress from the cotton cloth."),
    ("c3", "In the orchard every branch carried ripe fruit before the harvest."),
    ("c4", "The tailor chose a heavy fabric for the coat."),
    ("c5", "The rooster crowed loudly at sunrise on the farm."),
    ("c6", "The man read the newspaper on the train."),
]
QUERIES = [
    ("q1", "The fruit weighed down the branches.", "branches"),
    ("q2", "Which fabric is good for a dress?", "fabric"),
    ("q3", "The rooster called at dawn.", "rooster"),
]
QRELS = {"q1": ["c1", "c3"], "q2": ["c2", "c4"], "q3": ["c5"]}


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, t in CORPUS:
            f.write(json.dumps({"_id": i, "title": "", "text": t, "metadata": {"lang": "en"}}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f:
        for i, t, w in QUERIES:
            s = t.index(w)
            f.write(json.dumps({"_id": i, "text": t, "metadata": {"lang": "en", "start": s, "end": s + len(w)}}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, ds in QRELS.items():
            for d in ds:
                f.write(f"{q}\t{d}\t1\n")
    return folder


def test_metrics_by_hand() -> None:
    rel = {"a": 1, "b": 1}
    assert ndcg_at(["a", "b", "c"], rel, 10) == pytest.approx(1.0)
    assert ndcg_at(["c", "a"], rel, 10) == pytest.approx((1 / 1.584962500721156) / (1 + 1 / 1.584962500721156))
    m = score_run({"q": ["c", "a"]}, {"q": rel})
    assert m["p@1"] == 0.0 and m["mrr@10"] == 0.5 and m["recall@10"] == 0.5 and m["p@5"] == 0.2


def test_eval_retrieval_on_demo_vocabulary(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "beir")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    rep = evaluate_retrieval(kg, folder, ["none", "knowledge", "bm25"], k=10)
    assert rep.queries == 3
    assert set(rep.modes) == {"none", "knowledge", "bm25"}
    for m in rep.modes.values():
        assert set(m) >= {"ndcg@10", "p@1", "p@5", "mrr@10", "recall@10"}
    # sense selection keeps fabric documents out of the branch query
    assert rep.modes["knowledge"]["p@1"] == 1.0
    assert rep.modes["knowledge"]["ndcg@10"] >= rep.modes["none"]["ndcg@10"]
    # each mode against label matching, query by query
    assert set(rep.vs_none) == {"knowledge", "bm25"}
    gain = rep.vs_none["knowledge"]["ndcg@10"]
    assert gain.delta == pytest.approx(rep.modes["knowledge"]["ndcg@10"] - rep.modes["none"]["ndcg@10"], abs=1e-3)
    assert gain.wins + gain.losses <= 3 and 0.0 < gain.p <= 1.0
    assert "knowledge vs none: ndcg@10 " in rep.table()
    assert kg.documents() == []  # the corpus was removed again
    assert kg.questions() == []  # and so were the questions the run recorded


def test_eval_retrieval_keeps_questions_asked_before_and_everything_with_keep(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "beir")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    mine = kg.ask(QUERIES[0][1], lang="en", wsd="knowledge").question_iri
    evaluate_retrieval(kg, folder, ["knowledge"], k=10)
    assert [q["iri"] for q in kg.questions()] == [mine]
    evaluate_retrieval(kg, folder, ["knowledge"], k=10, keep=True)
    assert len(kg.documents()) == len(CORPUS) and len(kg.questions()) == len(QUERIES)


def test_cli_json_and_bad_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert main(["--store", str(store), "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")]) == 0
    folder = write_beir(tmp_path / "beir")
    capsys.readouterr()
    assert main(["--store", str(store), "eval", "retrieval", str(folder), "--wsd", "none,knowledge", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == 3 and set(out["modes"]) == {"none", "knowledge", "bm25"}
    assert set(out["vs_none"]["knowledge"]) == {"ndcg@10", "p@1"}
    assert set(out["vs_none"]["knowledge"]["p@1"]) == {"delta", "wins", "losses", "p"}
    # another cut-off names its columns after it
    assert main(["--store", str(store), "eval", "retrieval", str(folder), "--wsd", "none", "-k", "5"]) == 0
    table = capsys.readouterr().out
    assert "| mode | ndcg@5 | p@1 | p@5 | mrr@5 | recall@5 |" in table and "bm25 vs none: ndcg@5" in table
    (folder / "queries.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match="no queries"):
        read_beir(folder)
    assert main(["--store", str(store), "eval", "retrieval", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err


def test_en_sense_dev_needs_wordnet(shared_data: Path) -> None:
    """The shared BEIR set reads cleanly (the full run needs OEWN loaded: see README Evaluation)."""
    data = read_beir(shared_data / "retrieval" / "en-sense-dev")
    assert len(data.queries) == 84 and len(data.corpus) == 135
    assert all(q.focus for q in data.queries)


def test_llm_mode_on_a_loopback_server_counts_calls(tmp_path: Path) -> None:
    """--wsd llm decides the questions through the real openai client against a loopback
    OpenAI-compatible server; the report counts its calls and tokens (documents stay indexed by
    the knowledge selector, so the other modes make no call)."""
    from kg_rag.settings import Settings
    from tests.support.llm_server import KEY, LlmServer, choose

    folder = write_beir(tmp_path / "beir")
    with LlmServer(choose({})) as srv:
        cfg = Settings(llm_base_url=srv.url, llm_api_key=KEY, llm_model="test-model", llm_timeout=5.0)
        kg = KnowledgeGraph(EmbeddedStore(":memory:"), cfg)
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
        rep = evaluate_retrieval(kg, folder, ["knowledge", "llm"], k=10)
        requests = len(srv.chat_requests)
    assert requests >= 1
    assert rep.llm == {"llm": {"calls": requests, "tokens_in": rep.llm["llm"]["tokens_in"],
                               "tokens_out": rep.llm["llm"]["tokens_out"]}}
    assert rep.llm["llm"]["tokens_in"] > 0 and rep.llm["llm"]["tokens_out"] > 0
    assert set(rep.modes) == {"knowledge", "llm"} and rep.failures["llm"] == 0
    assert f"llm: {requests} LLM calls" in rep.table()
