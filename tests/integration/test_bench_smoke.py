"""The benchmark harness (bench/): measurement, statistics, report, and a tiny run on generated data."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import BenchError, Stat, percentile, run_child
from bench.report import Section, Target, ratio_range, write
from tests.support.paths import ROOT

LMF = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE LexicalResource SYSTEM "http://globalwordnet.github.io/schemas/WN-LMF-1.3.dtd">
<LexicalResource xmlns:dc="https://globalwordnet.github.io/schemas/dc/">
  <Lexicon id="oewn" label="Tiny English" language="en" email="x@example.org"
           license="https://creativecommons.org/licenses/by/4.0" version="2025">
    <LexicalEntry id="oewn-bank-n">
      <Lemma writtenForm="bank" partOfSpeech="n"/>
      <Sense id="oewn-bank__1.14.00.." synset="oewn-00000001-n"/>
      <Sense id="oewn-bank__1.17.01.." synset="oewn-00000002-n"/>
    </LexicalEntry>
    <LexicalEntry id="oewn-river-n">
      <Lemma writtenForm="river" partOfSpeech="n"/>
      <Sense id="oewn-river__1.17.00.." synset="oewn-00000003-n"/>
    </LexicalEntry>
    <LexicalEntry id="oewn-money-n">
      <Lemma writtenForm="money" partOfSpeech="n"/>
      <Sense id="oewn-money__1.21.00.." synset="oewn-00000004-n"/>
    </LexicalEntry>
    <Synset id="oewn-00000001-n" ili="i1" partOfSpeech="n">
      <Definition>a financial institution that accepts deposits</Definition>
      <SynsetRelation relType="hypernym" target="oewn-00000004-n"/>
    </Synset>
    <Synset id="oewn-00000002-n" ili="i2" partOfSpeech="n">
      <Definition>sloping land beside a body of water</Definition>
      <Example>they pulled the canoe up on the bank</Example>
    </Synset>
    <Synset id="oewn-00000003-n" ili="i3" partOfSpeech="n">
      <Definition>a large natural stream of water</Definition>
    </Synset>
    <Synset id="oewn-00000004-n" ili="i4" partOfSpeech="n">
      <Definition>the most common medium of exchange</Definition>
    </Synset>
  </Lexicon>
</LexicalResource>
"""


def test_run_child_measures_one_child(tmp_path: Path) -> None:
    code = ("import json, time; b = bytearray(64 * 2**20); t = time.time()\n"
            "while time.time() - t < 0.3: pass\n"
            "print('noise'); print(json.dumps({'n': len(b)}))")
    r = run_child([sys.executable, "-c", code])
    assert r.wall >= 0.3
    assert r.cpu >= 0.05                     # busy loop: CPU time of the child is counted (shared machine)
    assert r.rss_mb >= 64                    # its own peak memory, not ours
    assert r.out == {"n": 64 * 2**20}
    with pytest.raises(BenchError, match="exit 3"):
        run_child([sys.executable, "-c", "import sys; sys.exit(3)"])


def test_statistics() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([1, 2, 3, 4, 5], 95) == pytest.approx(4.8)
    s = Stat.of([3.0, 1.0, 2.0])
    assert (s.median, s.lo, s.hi, s.n) == (2.0, 1.0, 3.0, 3)
    m, lo, hi = ratio_range([2.0, 4.0, 3.0], [1.0, 1.0, 2.0])
    assert m == pytest.approx(3.0 / 1.0) and lo == pytest.approx(1.5) and hi == pytest.approx(4.0)


def test_report_lists_misses_plainly(tmp_path: Path) -> None:
    sec = Section("load", "a title", scale="tiny")
    sec.targets.append(Target("what", "3 s", "1 s", "3.00×", "≤ 1.5×", False))
    sec.targets.append(Target("other", "—", "—", "—", "x", None, "not there"))
    sec.command("kg-rag load x")
    out = tmp_path / "R.md"
    write(out, [sec], ["python -m bench.run"], ["- env"], 1.0)
    text = out.read_text()
    assert "| load | what | 3 s | 1 s | 3.00× | ≤ 1.5× | **MISSED** | tiny |" in text
    assert "not measured: not there" in text
    assert "kg-rag load x" in text


def test_bench_skips_without_shared_data(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "bench.run", "--shared", str(tmp_path / "absent")],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0
    assert "skipped" in r.stderr and "absent" in r.stderr


@pytest.mark.slow
def test_tiny_run_of_load_and_lookup(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "wordnet").mkdir(parents=True)
    with gzip.open(shared / "wordnet" / "english-wordnet-2025.xml.gz", "wt", encoding="utf-8") as f:
        f.write(LMF)
    report = tmp_path / "REPORT.md"
    r = subprocess.run(
        [sys.executable, "-m", "bench.run", "--shared", str(shared), "--only", "load,lookup",
         "--scale", "tiny", "--repeat", "1", "--out", str(tmp_path / "out"), "--report", str(report)],
        capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    text = report.read_text()
    assert "## load:" in text and "## lookup:" in text
    # a section may wait for a missing command, but it must never crash
    assert "failed:" not in text, text
    if "does not exist yet" not in text:
        assert "| load | OEWN load, wall time vs `oxigraph load`" in text
        assert "| lookup | senses + definitions for 3 lemmas" in text   # bank, river, money
        assert "wn.add()" in text and "wn.senses()" in text


def test_service_memory_reads_the_process_tree() -> None:
    from bench.sec_svcmem import memory

    code = "import sys, time; b = bytearray(96 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('ok', flush=True); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ok"
        import os

        mine = memory(os.getpid())
        alone = memory(child.pid)
        assert mine["processes"] >= 2 and alone["processes"] == 1
        assert alone["rss_main"] >= 96 * 1024 and alone["pss_sum"] >= 90 * 1024   # kB
        # the tree counts the child: its summed memory is at least the child's and our own
        assert mine["rss_sum"] >= alone["rss_main"] + mine["rss_main"] - 1024
        assert mine["pss_sum"] >= alone["pss_sum"]
    finally:
        child.kill()
        child.wait()


def test_a_failed_documents_store_is_not_built_again_in_the_same_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """grow's build failing (a stage timed out) fails retrieve with that error: retrieve does not
    index every document again (at --scale full, another 80 minutes)."""
    from bench import docstore
    from bench.context import Ctx

    calls: list[str] = []

    def failing(ctx: Ctx, with_ask: bool) -> docstore.Built:
        calls.append(ctx.scale)
        raise BenchError("timed out after 3600 s: kg-rag index part-100000.jsonl")

    monkeypatch.setattr(docstore, "_build", failing)
    ctx = Ctx(shared=tmp_path, out=tmp_path, scale="tiny")
    with pytest.raises(BenchError, match="timed out"):
        docstore.build(ctx)
    with pytest.raises(BenchError, match="failed to build earlier in this run: timed out"):
        docstore.build(ctx)
    assert calls == ["tiny"]

