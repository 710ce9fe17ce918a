"""``make eval`` (kg_rag.eval.report): WSD and retrieval reports, tables and charts, on a tiny
shared-data folder laid out like ../shared/data."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from kg_rag.eval.report import main
from tests.support.paths import DATA

SENTENCES = {
    "s1": "They pulled the canoe up on the bank of the river.",
    "s2": "The river bank was muddy after the rain.",
    "s3": "She keeps her savings in the bank on the corner.",
    "s4": "The bank lent money to the farmers.",
}


def shared_folder(root: Path) -> Path:
    (root / "wordnet").mkdir(parents=True)
    with gzip.open(root / "wordnet" / "english-wordnet-2025.xml.gz", "wb") as f:
        f.write((DATA / "loaders" / "mini-lmf.xml").read_bytes())
    (root / "wsd").mkdir()
    shutil.copy(DATA / "wsd-tiny.data.xml", root / "wsd" / "semeval2007.data.xml")
    shutil.copy(DATA / "wsd-tiny.gold.key.txt", root / "wsd" / "semeval2007.gold.key.txt")
    beir = root / "retrieval" / "tiny-dev"
    (beir / "qrels").mkdir(parents=True)
    with (beir / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, t in SENTENCES.items():
            f.write(json.dumps({"_id": i, "text": t, "metadata": {"lang": "en"}}) + "\n")
    with (beir / "queries.jsonl").open("w", encoding="utf-8") as f:
        for i in ("s1", "s3"):
            s = SENTENCES[i].index("bank")
            f.write(json.dumps({"_id": i, "text": SENTENCES[i],
                                "metadata": {"lang": "en", "start": s, "end": s + 4}}) + "\n")
        # a German query whose aligned translation is s4 (no German lexicon here: no concept)
        f.write(json.dumps({"_id": "de.s4", "text": "Die Bank lieh den Bauern Geld.",
                            "metadata": {"lang": "de", "start": 4, "end": 8}}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\ns1\ts2\t1\ns3\ts4\t1\n"
                                             "de.s4\ts3\t1\n", encoding="utf-8")
    return root


def test_report_writes_wsd_and_retrieval_tables_and_charts(tmp_path: Path) -> None:
    shared = shared_folder(tmp_path / "shared")
    out = tmp_path / "out"
    assert main(["--shared", str(shared), "--store", str(tmp_path / "store"), "--out", str(out)]) == 0
    wsd = (out / "wsd.md").read_text(encoding="utf-8")
    assert "WSD on" in wsd and "| knowledge |" in wsd and "| first-sense |" in wsd and "| random |" in wsd
    ret = (out / "retrieval.md").read_text(encoding="utf-8")
    assert "## tiny-dev" in ret and "3 queries" in ret
    # per query language, each with its comparison against none, and the translation left out
    assert "\n### de (1 queries)\n" in ret and "| none | 0.000 | 0.000 | 0.000 | 0.000 | 0.000 | 1 |" in ret and "\n### en (2 queries)\n" in ret
    assert "- knowledge vs none (en): ndcg@10 " in ret and "for 1 queries, the aligned translation" in ret
    for mode in ("none", "knowledge", "first-sense", "bm25"):
        assert f"| {mode} |" in ret
    assert "| probability |" in wsd and "| confidence |" in wsd and "| by probability |" in wsd
    for png in ("wsd.png", "wsd-calibration.png", "retrieval.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_is_compared_with_the_previous_one_set_by_set(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    shared = shared_folder(tmp_path / "shared")
    out, store = tmp_path / "out", str(tmp_path / "store")
    assert main(["--shared", str(shared), "--store", store, "--out", str(out)]) == 0
    first = json.loads((out / "runs.json").read_text(encoding="utf-8"))
    assert "against the run" not in (out / "wsd.md").read_text(encoding="utf-8")   # nothing before it
    assert set(first["wsd"]) == {"semeval2007"} and set(first["retrieval"]) == {"tiny-dev"}
    right = first["wsd"]["semeval2007"]["right"]
    assert right and set(right.values()) <= {0.0, 1.0}
    assert set(first["retrieval"]["tiny-dev"]) == {"none", "knowledge", "first-sense", "bm25"}
    # a baseline that differs from this run in one WSD instance and in one query's nDCG@10
    other = json.loads(json.dumps(first))
    flipped = next(iter(right))
    other["wsd"]["semeval2007"]["right"][flipped] = 1.0 - right[flipped]
    s1 = first["retrieval"]["tiny-dev"]["knowledge"]["s1"]
    other["retrieval"]["tiny-dev"]["knowledge"]["s1"] = {"ndcg@10": 1.0 - s1["ndcg@10"], "p@1": s1["p@1"]}
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(other), encoding="utf-8")
    assert main(["--shared", str(shared), "--store", store, "--out", str(out), "--baseline", str(earlier)]) == 0
    wsd = (out / "wsd.md").read_text(encoding="utf-8")
    moved = "0 better, 1 worse" if right[flipped] == 0.0 else "1 better, 0 worse"
    assert f"against the run of {first['made']}" in wsd and f"({moved}, p = 1)" in wsd
    ret = (out / "retrieval.md").read_text(encoding="utf-8")
    line = next(x for x in ret.splitlines() if x.startswith("- knowledge against the run"))
    moved = "1 better, 0 worse" if s1["ndcg@10"] > 0.5 else "0 better, 1 worse"
    judged = len(first["retrieval"]["tiny-dev"]["knowledge"])
    assert s1["ndcg@10"] != 0.5 and f"ndcg@10 {(2 * s1['ndcg@10'] - 1) / judged:+.3f} [95 % CI" in line and moved in line
    assert "p@1 +0.000 [95 % CI +0.000, +0.000] (0 better, 0 worse, p = 1)" in line
    assert "- none against the run" in ret
    # the previous run in --out is the default baseline; "none" turns it off; a folder without
    # a run is a one-line error before anything runs
    assert main(["--shared", str(shared), "--store", store, "--out", str(out)]) == 0
    assert "+0.000 [95 % CI +0.000, +0.000] (0 better, 0 worse, p = 1)" in (out / "wsd.md").read_text(encoding="utf-8")
    assert main(["--shared", str(shared), "--store", store, "--out", str(out), "--baseline", "none"]) == 0
    assert "against the run" not in (out / "wsd.md").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["--shared", str(shared), "--store", store, "--out", str(tmp_path / "o2"),
                 "--baseline", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "no earlier run there" in err and not (tmp_path / "o2" / "wsd.md").exists()
    broken = tmp_path / "broken.json"        # a run record whose parts are not what a run writes
    broken.write_text(json.dumps({**first, "wsd": {"semeval2007": {"right": [1, 0]}}}), encoding="utf-8")
    assert main(["--shared", str(shared), "--store", store, "--out", str(tmp_path / "o2"),
                 "--baseline", str(broken)]) == 2
    assert "malformed" in capsys.readouterr().err and not (tmp_path / "o2" / "wsd.md").exists()


def test_report_without_wsd_data_says_what_to_pass(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--shared", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "pass --shared" in capsys.readouterr().err


def test_report_scores_a_set_with_its_own_dictionary(tmp_path: Path) -> None:
    """A set of LEXICON_SETS: its lexicon.ttl is loaded into its own graph and is the only source
    of candidates; the other sets are scored as before."""
    from kg_rag.eval.report import lexicon_graph
    from kg_rag.store import EmbeddedStore
    from loaders import list_sources

    shared = shared_folder(tmp_path / "shared")
    with gzip.open(shared / "wordnet" / "omw-he-2.0.xml.gz", "wb") as f:
        f.write((DATA / "loaders" / "mini-he.xml").read_bytes())
    folder = shared / "wsd" / "hebrew-homographs-dev"
    folder.mkdir()
    src = DATA / "sense-only"
    shutil.copy(src / "corpus-he.data.xml", folder / "items.data.xml")
    shutil.copy(src / "corpus-he.gold.key.txt", folder / "items.gold.key.txt")
    shutil.copy(src / "dictionary.ttl", folder / "lexicon.ttl")
    out, store = tmp_path / "out", tmp_path / "store"
    assert main(["--shared", str(shared), "--store", str(store), "--out", str(out)]) == 0
    wsd = (out / "wsd.md").read_text(encoding="utf-8")
    graph = lexicon_graph("hebrew-homographs-dev")
    assert "WSD on tiny (lang en)" in wsd and "WSD on sense-only-he (lang he)" in wsd
    assert f"candidates only from the source {graph}" in wsd
    # the noun and the verb, by POS cues; gold keys by skos:notation and dc:identifier
    assert "| knowledge | 100.0 | 100.0 | 100.0 | 2/2 |" in wsd
    with EmbeddedStore(store) as s:
        assert graph in {r.graph for r in list_sources(s)}
