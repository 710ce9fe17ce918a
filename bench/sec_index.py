"""index: ``kg-rag index`` with one process and with ``--workers N`` side by side (issue 17)."""

from __future__ import annotations

import os
import shutil

from bench.context import KG, Ctx
from bench.measure import PY, Run, Stat, run_child
from bench.report import Section, Target, fmt_s, runs_table

TITLE = "index: `kg-rag index` serial and with `--workers N` (one core each), side by side"
TARGETS = [("index with --workers N ÷ serial, wall (N = the machine's cores)",
            "scales ~linearly: ≥ 0.8 × N")]


def run(ctx: Ctx, sec: Section) -> None:
    corpus = ctx.data("retrieval", "en-sense-dev", "corpus.jsonl")
    if not corpus.exists():
        sec.skip(f"no {corpus}", TARGETS)
        return
    n = max(2, os.cpu_count() or 2)
    work = ctx.fresh("index")
    # a bulk-loaded store is compacted by the first process that writes to it (RocksDB's
    # background threads: 0.6-0.9 of a core for seconds); a user's store has had that done by
    # its first write, so every run here starts from a copy compacted once beforehand
    base = work / "base"
    shutil.copytree(ctx.store("oewn"), base)
    run_child([PY, "-c", "import sys, pyoxigraph; s = pyoxigraph.Store(sys.argv[1]); "
                         "s.optimize(); s.flush()", str(base)])
    sec.scale = (f"en-sense-dev's corpus ({corpus.stat().st_size // 1000} kB, 135 sentences) into a "
                 f"fresh copy of the OEWN store (compacted once) per run; 1 and {n} workers "
                 f"interleaved, {ctx.repeat} runs each, after one unmeasured run that builds the "
                 f"disk caches")

    def index(workers: int, i: int) -> Run:
        dest = work / f"w{workers}-{i}"
        shutil.copytree(base, dest)
        try:
            return run_child([*KG, "--store", str(dest), "index", str(corpus), "--workers",
                              str(workers), "--json"])
        finally:
            ctx.log(f"    index --workers {workers} #{i + 1} done")

    index(1, -1)   # the knowledge base and lexicon disk caches, once
    runs: dict[int, list[Run]] = {1: [], n: []}
    for i in range(ctx.repeat):
        for w in (1, n):
            runs[w].append(index(w, i))
            shutil.rmtree(work / f"w{w}-{i}", ignore_errors=True)
    seconds = {w: Stat.of([float(r.out.get("seconds", r.wall)) for r in rs]) for w, rs in runs.items()}
    speedup = seconds[1].median / seconds[n].median
    sec.say("`seconds` is the index report's own figure (the process's start-up excluded); wall, "
            "CPU and memory below are the whole process tree's.", "")
    sec.table(["workers", "index seconds, median (min–max)"],
              [[str(w), f"{fmt_s(s.median)} ({fmt_s(s.lo)}–{fmt_s(s.hi)})"] for w, s in seconds.items()])
    runs_table(sec, {f"kg-rag index --workers {w}": rs for w, rs in runs.items()})
    sec.targets.append(Target(TARGETS[0][0], fmt_s(seconds[n].median), f"serial {fmt_s(seconds[1].median)}",
                              f"{speedup:.2f}×", TARGETS[0][1], speedup >= 0.8 * n))
