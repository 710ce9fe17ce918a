"""``kg-rag eval wsd`` on a tiny hand-written Raganato-format corpus, bad inputs, and (behind a
prepared store or KG_RAG_FULL=1) the real semeval2007 development set."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.eval.corpus import read_corpus, read_keys
from kg_rag.eval.wsd import Candidates, evaluate
from kg_rag.senses.baselines import FirstSenseSelector
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import DATA, load_fixture

CORPUS = DATA / "wsd-tiny.data.xml"
GOLD = DATA / "wsd-tiny.gold.key.txt"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Derived data on disk (the knowledge base) goes to a folder of the test."""
    from kg_rag.settings import settings

    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with EmbeddedStore(path) as s:
        load_fixture(s)
    return path


def test_exact_scores_on_the_tiny_corpus(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    store = load_fixture(mem_store)
    pred = tmp_path / "pred.key.txt"
    rep = evaluate(store, KnowledgeSelector(store), CORPUS, GOLD, predictions=pred)
    d = rep.as_dict()
    # 8 scored instances: zebra/NOUN and bank/VERB have no senses, the 6 others are right
    assert (d["n"], d["answered"], d["correct"], d["no_candidates"]) == (8, 6, 6, 2)
    assert d["precision"] == 1.0 and d["recall"] == 0.75 and d["f1"] == pytest.approx(0.8571, abs=1e-4)
    assert d["by_pos"]["NOUN"]["f1"] == pytest.approx(0.9231, abs=1e-4)
    assert d["by_pos"]["VERB"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "n": 1,
                                   "answered": 0, "correct": 0}
    # first sense gets the river bank wrong: 5 of 6
    fs = d["baselines"]["first-sense"]
    assert (fs["correct"], fs["precision"], fs["recall"]) == (5, 0.8333, 0.625)
    assert set(d["baselines"]) == {"first-sense", "random"}
    # instance by instance: the river bank is the one instance only the selector gets right; the
    # two without senses count as wrong for both
    assert len(rep.system.right) == 8 and sum(rep.system.right.values()) == 6
    vs = d["versus"]["first-sense"]
    assert (vs["wins"], vs["losses"]) == (1, 0) and vs["delta"] == pytest.approx(1 / 8, abs=1e-4)
    assert vs["ci95"][0] <= vs["delta"] <= vs["ci95"][1] and vs["p"] == 1.0   # one instance: noise
    assert any("ghost.s0.i0" in p for p in d["problems"])
    assert any("zebra/NOUN" in p for p in d["problems"])
    # reliability: every answered instance with two candidates or more, in its confidence bucket
    find, gold = Candidates(store), read_keys(GOLD)
    ambiguous = sum(1 for t in read_corpus(CORPUS).instances
                    if t.instance in gold and len(find(t.lemma, "en", t.pos)) > 1)
    rel = d["reliability"]
    assert rel["threshold"] == 0.5 and len(rel["buckets"]) == 10
    assert sum(b["n"] for b in rel["buckets"]) == rel["confident"]["n"] + rel["unsure"]["n"] == ambiguous > 0
    assert sum(b["correct"] for b in rel["buckets"]) == rel["confident"]["correct"] + rel["unsure"]["correct"]
    assert "reliability" not in fs   # baselines have no confidence worth calibrating
    # calibration over the same decisions: the knowledge selector chooses its most probable
    # candidate, so the chosen probability is the largest of the normalised scores
    cal = rep.system.calibration
    assert cal is not None and len(cal) == ambiguous and cal.without_scores == 0
    for p_chosen, cands in zip(cal.probability, cal.candidates, strict=True):
        assert p_chosen == max(p for p, _ in cands) and sum(p for p, _ in cands) == pytest.approx(1.0)
    assert all(cal.right) and sum(any(g for _, g in c) for c in cal.candidates) == ambiguous
    assert d["calibration"]["n"] == ambiguous and d["calibration"]["correct"] == ambiguous
    for which in ("probability", "confidence"):
        s = d["calibration"][which]
        assert len(s["reliability"]) == 10 and len(s["risk_coverage"]) == 10
        assert s["risk_coverage"][-1] == {"coverage": 100, "n": ambiguous, "accuracy": 1.0}
        # all right: the error is how far below 1 the predictions are
        assert s["ece"] == pytest.approx(1 - sum(getattr(cal, which)) / ambiguous, abs=1e-4)
    assert "calibration" not in fs
    lines = pred.read_text(encoding="utf-8").split("\n")
    assert "t0.s0.i2 bank%1:17:01::" in lines and "t1.s0.i1 bank%1:14:00::" in lines
    assert len([x for x in lines if x]) == 6


def test_gold_by_ili_and_identifier(mem_store: EmbeddedStore) -> None:
    """t1.s0.i0 is keyed by an ILI id and t1.s0.i1 by a dct:identifier: both count."""
    store = load_fixture(mem_store)
    rep = evaluate(store, FirstSenseSelector(), CORPUS, GOLD)
    assert rep.system.answers["t1.s0.i0"] == "money%1:21:00::"
    assert rep.system.total.correct == 5


def test_cli_json_and_text(store_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--store", str(store_dir), "eval", "wsd", "--data", str(CORPUS), "--gold", str(GOLD), "--json"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("precision", "recall", "f1", "n", "answered", "by_pos", "seconds_per_instance", "baselines"):
        assert k in d
    assert d["f1"] == pytest.approx(0.8571, abs=1e-4)
    assert {"ece", "brier", "brier_multiclass", "reliability", "risk_coverage"} <= set(
        d["calibration"]["probability"])
    code = main(["--store", str(store_dir), "eval", "wsd", "--data", str(CORPUS), "--gold", str(GOLD),
                 "--wsd", "first-sense"])
    assert code == 0
    out = capsys.readouterr().out
    assert "| first-sense | 83.3 | 62.5 | 71.4 | 6/8 |" in out
    assert "| random |" in out
    assert "| risk–coverage (accuracy of the most confident x %) |" in out


def test_bad_inputs_are_clear_messages(store_dir: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.data.xml"
    broken.write_text("<corpus lang='en'><text><sentence><wf>a</sentence></corpus>", encoding="utf-8")
    assert main(["--store", str(store_dir), "eval", "wsd", "--data", str(broken), "--gold", str(GOLD)]) == 2
    err = capsys.readouterr().err
    assert "not well-formed XML" in err and err.count("\n") == 1
    with pytest.raises(InputError, match="no corpus file"):
        read_corpus(tmp_path / "missing.xml")
    bad_keys = tmp_path / "bad.key.txt"
    bad_keys.write_text("only_an_id\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.key.txt:1"):
        read_keys(bad_keys)
    wrong_root = tmp_path / "wrong.xml"
    wrong_root.write_text("<html/>", encoding="utf-8")
    with pytest.raises(InputError, match="expected <corpus>"):
        read_corpus(wrong_root)


def test_corpus_without_lang_is_reported(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    store = load_fixture(mem_store)
    text = CORPUS.read_text(encoding="utf-8").replace('<corpus lang="en" ', "<corpus ")
    nolang = tmp_path / "nolang.data.xml"
    nolang.write_text(text, encoding="utf-8")
    rep = evaluate(store, FirstSenseSelector(), nolang, GOLD)
    assert rep.lang == "en" and any("no lang attribute" in p for p in rep.problems)
    assert rep.system.total.correct == 5
    # --lang chooses the lexicon: there is no Hebrew 'bank', so nothing is answered
    rep_he = evaluate(store, FirstSenseSelector(), nolang, GOLD, lang="he")
    assert rep_he.system.total.answered == 0 and rep_he.no_candidates == 8


def _semeval_store() -> Path | None:
    path = os.environ.get("KG_RAG_WSD_STORE")
    if path and Path(path).is_dir():
        return Path(path)
    return None


@pytest.mark.shared
@pytest.mark.slow
def test_semeval2007_with_oewn(shared_data: Path, tmp_path: Path) -> None:
    """Needs OEWN: a prepared store in $KG_RAG_WSD_STORE, or KG_RAG_FULL=1 to load it (minutes)."""
    prepared = _semeval_store()
    if prepared is None and os.environ.get("KG_RAG_FULL") != "1":
        pytest.skip("needs a store with OEWN 2025 in $KG_RAG_WSD_STORE, or KG_RAG_FULL=1 to build one")
    if prepared is None:
        from loaders import load_file

        prepared = tmp_path / "oewn"
        with EmbeddedStore(prepared) as s:
            load_file(s, shared_data / "wordnet" / "english-wordnet-2025.xml.gz")
    wsd = shared_data / "wsd"
    t0 = time.perf_counter()
    with EmbeddedStore(prepared) as store:
        rep = evaluate(store, KnowledgeSelector(store), wsd / "semeval2007.data.xml",
                       wsd / "semeval2007.gold.key.txt")
    assert time.perf_counter() - t0 < 120
    assert rep.system.total.n == 455
    fs = rep.baselines["first-sense"].total.f1
    assert 0.50 < fs < 0.60
    assert rep.system.total.f1 > fs


def test_cli_llm_selector_on_a_loopback_server(store_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    """--wsd llm builds LLMSenseSelector.from_settings: the real openai client against a real
    OpenAI-compatible server on 127.0.0.1 that always picks the river sense of 'bank'."""
    from kg_rag.settings import settings
    from tests.support.llm_server import LlmServer, choose, llm_env

    monkeypatch.chdir(tmp_path)  # the run record goes to the current directory

    with LlmServer(choose({"bank": "sloping land"})) as srv:
        for k, v in llm_env(srv).items():
            monkeypatch.setenv(k, v)
        settings.cache_clear()
        try:
            code = main(["--store", str(store_dir), "eval", "wsd", "--data", str(CORPUS),
                         "--gold", str(GOLD), "--wsd", "llm", "--json"])
        finally:
            settings.cache_clear()
        assert srv.chat_requests, "the selector asked the server"
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert d["system"] == "llm"
    # river bank right (t0), money bank wrong (t1): one error among the answered
    assert d["answered"] - d["correct"] == 1
    assert set(d["baselines"]) == {"first-sense", "random"}
    assert Path(d["run_record"]).parent == Path(".") and (tmp_path / d["run_record"]).is_file()
    # each decided item carries what the calibration tables are made of
    items = json.loads((tmp_path / d["run_record"]).read_text(encoding="utf-8"))["items"]
    decided = [i for i in items if i["chosen"] is not None]
    assert len(decided) == d["answered"]
    for i in decided:
        assert 0.0 <= i["probability"] <= 1.0 and 0.0 <= i["confidence"] <= 1.0
    assert all("probability" not in i for i in items if i["chosen"] is None)


def test_scores_by_text(mem_store: EmbeddedStore) -> None:
    from kg_rag.eval.report import _by_text, wsd_table
    from kg_rag.eval.wsd import Score, SystemResult

    store = load_fixture(mem_store)
    rep = evaluate(store, KnowledgeSelector(store), CORPUS, GOLD)
    texts = [t.id for t in read_corpus(CORPUS).texts]
    for sy in (rep.system, *rep.baselines.values()):
        assert list(sy.by_text) == texts
        for field in ("n", "answered", "correct"):
            assert sum(getattr(s, field) for s in sy.by_text.values()) == getattr(sy.total, field)
    assert rep.as_dict()["by_text"][texts[0]]["n"] == rep.system.by_text[texts[0]].n
    table = wsd_table(rep)
    assert "| F1 by text | " + " | ".join(f"{t} (n={rep.system.by_text[t].n})" for t in texts) + " |" in table
    # many texts: one line, how often the system is ahead of the first baseline
    mine, ref = SystemResult("knowledge"), SystemResult("first-sense")
    for i in range(20):
        mine.by_text[f"b{i:02d}"] = Score(10, 10, 6 if i < 15 else 3 if i < 18 else 5)
        ref.by_text[f"b{i:02d}"] = Score(10, 10, 5)
    line = _by_text([mine, ref])[-1]
    assert line.startswith("F1 by text (20 texts): knowledge − first-sense ahead in 15, level in 2, "
                           "behind in 3; median +10.0 points; most behind: b15 (n=10) -20.0")
