"""eval retrieval on a small hand-written BEIR folder over the demo vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.eval.retrieval import (
    BeirQuery,
    document_of,
    evaluate_retrieval,
    excluded_ids,
    ndcg_at,
    read_beir,
    score_run,
)
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
    assert set(out["vs_none"]["knowledge"]["p@1"]) == {"delta", "wins", "losses", "p", "ci95"}
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


# --- cross-lingual: the aligned translation is left out; per-language slices ----------------
X_CORPUS = [
    ("t1", "Anna bought the fabric in Berlin."),          # translation of de.t1, never relevant
    ("t2", "The branches in Hamburg carried fruit."),     # translation of de.t2, never relevant
    ("c1", "The tailor chose a heavy fabric for the coat."),
    ("c2", "She sewed a summer dress from the cotton fabric."),
    ("c3", "In the orchard every branch carried ripe fruit before the harvest."),
    ("c4", "The rooster crowed loudly at sunrise on the farm."),
]
#: (id, lang, text, focus word); ``x.t1`` breaks the id rule on purpose and has no qrels
X_QUERIES = [
    ("de.t1", "de", "Anna kaufte den Stoff in Berlin.", "Stoff"),
    ("de.t2", "de", "Die Zweige in Hamburg trugen Früchte.", "Zweige"),
    ("q1", "en", "Which fabric is good for a dress?", "fabric"),
    ("q2", "en", "The rooster called at dawn.", "rooster"),
    ("x.t1", "de", "Anna kaufte den Stoff in Berlin.", "Stoff"),
]
X_QRELS = {"de.t1": ["c1", "c2"], "de.t2": ["c3"], "q1": ["c1", "c2"], "q2": ["c4"]}
X_MODES = ["none", "knowledge", "first-sense", "bm25"]


def write_x_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, t in X_CORPUS:
            f.write(json.dumps({"_id": i, "title": "", "text": t, "metadata": {"lang": "en"}}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as f:
        for i, lang, t, w in X_QUERIES:
            s = t.index(w)
            f.write(json.dumps({"_id": i, "text": t, "metadata": {"lang": lang, "start": s, "end": s + len(w)}}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, ds in X_QRELS.items():
            for d in ds:
                f.write(f"{q}\t{d}\t1\n")
    return folder


def _q(qid: str, lang: str | None) -> BeirQuery:
    return BeirQuery(qid, "text", lang, None)


def test_excluded_ids_rule() -> None:
    corpus = {"d001", "d001.s005", "semeval2007.d000.s000"}
    assert excluded_ids(_q("es.d001.s005", "es"), corpus) == {"es.d001.s005", "d001.s005"}
    # a further part (the relaxed sets' target number): the longest prefix that is a corpus id
    assert excluded_ids(_q("fr.d001.s005.t003", "fr"), corpus) == {"fr.d001.s005.t003", "d001.s005"}
    assert excluded_ids(_q("fr.d001.s009", "fr"), corpus) == {"fr.d001.s009", "d001"}
    # only the query's own language is a prefix; no language, no rule; identical ids always
    assert excluded_ids(_q("es.d001.s005", "fr"), corpus) == {"es.d001.s005"}
    assert excluded_ids(_q("es.d001.s005", None), corpus) == {"es.d001.s005"}
    assert excluded_ids(_q("semeval2007.d000.s000", "en"), corpus) == {"semeval2007.d000.s000"}
    assert excluded_ids(_q("es.d002", "es"), corpus) == {"es.d002"}


def test_translation_never_ranked_and_slices_add_up(tmp_path: Path) -> None:
    folder = write_x_beir(tmp_path / "beir")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    rep = evaluate_retrieval(kg, folder, X_MODES, k=10)
    assert rep.aligned == 2 and set(rep.runs) == set(X_MODES)
    for mode in X_MODES:
        run = rep.runs[mode]
        assert "t1" not in run["de.t1"] and "t2" not in run["de.t2"], mode
        assert run["de.t1"], mode  # it still ranked the fabric sentences
        # the same question under an id outside the rule ranks the translation: the rule removed it
        assert "t1" in run["x.t1"], mode
    # label matching over the other five sentences: both fabric sentences before anything else
    assert rep.by_lang["de"].modes["none"]["p@1"] == 1.0
    assert set(rep.by_lang) == {"de", "en"}
    assert sum(s.queries for s in rep.by_lang.values()) == rep.queries == len(X_QUERIES)
    for mode, whole in rep.modes.items():
        parts = [s.modes[mode] for s in rep.by_lang.values()]
        assert sum(p["judged"] for p in parts) == whole["judged"] == len(X_QRELS)
        for m in ("ndcg@10", "p@1", "p@5", "mrr@10", "recall@10"):
            assert sum(p[m] * p["judged"] for p in parts) / whole["judged"] == pytest.approx(whole[m], abs=1e-3)
    for mode, n in rep.failures.items():
        assert sum(s.failures[mode] for s in rep.by_lang.values()) == n
    for lang, s in rep.by_lang.items():
        assert set(s.vs_none) == {"knowledge", "first-sense", "bm25"}
        cmp = s.vs_none["bm25"]["ndcg@10"]
        assert cmp.wins + cmp.losses <= s.modes["none"]["judged"]
        assert cmp.delta == pytest.approx(s.modes["bm25"]["ndcg@10"] - s.modes["none"]["ndcg@10"], abs=1e-3)
        assert f"bm25 vs none ({lang}): ndcg@10 " in rep.table()
    table = rep.table()
    assert "\n### de (3 queries)\n" in table and "\n### en (2 queries)\n" in table
    assert "for 2 queries, the aligned translation" in table
    out = rep.as_dict()
    assert out["excluded"]["aligned"] == 2 and "<lang>.<rest>" in out["excluded"]["rule"]
    assert set(out["by_lang"]["de"]["vs_none"]["knowledge"]) == {"ndcg@10", "p@1"}
    assert out["by_lang"]["en"]["queries"] == 2 and "runs" not in out


def test_one_language_has_no_slice_section(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "beir")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    rep = evaluate_retrieval(kg, folder, ["none", "bm25"], k=10)
    assert set(rep.by_lang) == {"en"} and rep.by_lang["en"].modes == rep.modes
    assert rep.aligned == 0 and "(en)" not in rep.table() and "aligned translation" not in rep.table()


def test_shared_cross_lingual_sets_follow_the_rule(shared_data: Path) -> None:
    """Every query of the cross-lingual dev sets has its aligned translation left out; en-sense-dev none."""
    for name, n in (("x-sense-dev", 89), ("x-sense-dev-relaxed", 198), ("en-sense-dev", 0)):
        data = read_beir(shared_data / "retrieval" / name)
        ids = {d.id for d in data.corpus}
        extra = [excluded_ids(q, ids) - {q.id} for q in data.queries]
        assert sum(1 for e in extra if e) == n, name
        assert all(len(e) <= 1 for e in extra)
        for q, e in zip(data.queries, extra, strict=True):
            assert not e & set(data.qrels.get(q.id, {}))  # never a relevant one


def test_document_of_rule() -> None:
    assert document_of("es.d001.s002.t008", "es") == "d001"
    assert document_of("semeval2007.d000.s000", "en") == "semeval2007.d000"
    assert document_of("d003.s010", "fr") == "d003"
    assert document_of("es.d001.s002", "fr") == "es.d001"   # only the query's own language
    assert document_of("q1", "en") is None and document_of("s1", "en") is None
    assert document_of("es.s001", "es") is None             # no document part left
    assert document_of("d001.sx", "en") is None


def test_slices_by_source_document_add_up(tmp_path: Path) -> None:
    # the demo folder's queries renamed as sentences of two documents (q1, q2 of d001; q3 of d002)
    names = {"q1": "en.d001.s001", "q2": "en.d001.s002.t001", "q3": "en.d002.s001"}
    folder = write_beir(tmp_path / "beir")
    lines = [json.loads(x) for x in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    (folder / "queries.jsonl").write_text("".join(json.dumps({**q, "_id": names[q["_id"]]}) + "\n" for q in lines),
                                          encoding="utf-8")
    qrels = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8")
    for old, new in names.items():
        qrels = qrels.replace(f"{old}\t", f"{new}\t")
    (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    rep = evaluate_retrieval(kg, folder, ["none", "knowledge", "bm25"], k=10)
    assert set(rep.by_document) == {"d001", "d002"}
    assert [s.queries for s in rep.by_document.values()] == [2, 1]
    for mode, whole in rep.modes.items():
        parts = [s.modes[mode] for s in rep.by_document.values()]
        assert sum(p["ndcg@10"] * p["judged"] for p in parts) / whole["judged"] == pytest.approx(whole["ndcg@10"], abs=1e-3)
    for s in rep.by_document.values():
        c = s.vs_none["knowledge"]["ndcg@10"]
        assert c.delta == pytest.approx(s.modes["knowledge"]["ndcg@10"] - s.modes["none"]["ndcg@10"], abs=1e-3)
    table = rep.table()
    assert "### by source document: ndcg@10, each mode − none" in table
    assert "| d002 | 1 | " in table and "bm25 − none" not in table
    assert set(rep.as_dict()["by_document"]) == {"d001", "d002"}
    # the demo's own ids name no document: no such section
    plain = evaluate_retrieval(kg, write_beir(tmp_path / "plain"), ["none", "knowledge"], k=10)
    assert plain.by_document == {} and "by source document" not in plain.table()
