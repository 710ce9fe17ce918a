"""lookup: candidate senses with definitions for N lemmas — our API vs ``wn.senses()``."""

from __future__ import annotations

import gzip
import random
import re
from pathlib import Path

from bench.context import Ctx
from bench.measure import Run, Stat, interleaved, percentile, run_child, worker
from bench.report import Section, Target, fmt_ratio, fmt_s, fmt_stat, ratio_range, runs_table

TITLE = "look up senses: candidate senses with definitions per lemma (embedded store)"
TARGETS = [
    ("senses + definitions for N lemmas, loop time vs wn", "within 2× of wn (≤ 2×)"),
    ("label → candidate senses, median per lemma", "< 1 ms median (issue 2)"),
]

_LEMMA = re.compile(rb'<Lemma writtenForm="([^"]+)"')


def sample_lemmas(src: Path, n: int, dest: Path, seed: int = 0) -> int:
    """``n`` distinct lemmas of the lexicon, drawn at random (seeded), one per line."""
    import html

    with gzip.open(src, "rb") if src.suffix == ".gz" else open(src, "rb") as f:
        data = f.read()
    lemmas = sorted({html.unescape(m.group(1).decode("utf-8")) for m in _LEMMA.finditer(data)})
    rng = random.Random(seed)
    pick = lemmas if len(lemmas) <= n else rng.sample(lemmas, n)
    dest.write_text("\n".join(pick) + "\n", encoding="utf-8")
    return len(pick)


def run(ctx: Ctx, sec: Section) -> None:
    if not ctx.oewn_file.exists():
        sec.skip(f"{ctx.oewn_file} is absent", TARGETS)
        return
    n_want = ctx.pick(200, 10_000, 10_000)
    work = ctx.dir("lookup")
    lemma_file = work / "lemmas.txt"
    n = sample_lemmas(ctx.oewn_file, n_want, lemma_file)
    ours_store = ctx.store("oewn")
    wn_db = ctx.store("wn")
    sec.scale = f"{n:,} OEWN lemmas drawn at random (seed 0); {ctx.repeat} interleaved repetitions"

    def ours(i: int) -> Run:
        return run_child(worker("work_lookup", str(ours_store), str(lemma_file)))

    def peer(i: int) -> Run:
        return run_child(worker("work_wn", "lookup", str(wn_db), str(lemma_file)))

    runs = interleaved({"kg-rag (embedded)": ours, "wn.senses()": peer}, ctx.repeat, ctx.log)
    o, p = runs["kg-rag (embedded)"], runs["wn.senses()"]
    api = o[0].out.get("api", "?")
    rows = []
    for name, rs in runs.items():
        lat = [x for r in rs for x in r.out["latencies"]]
        rows.append([name, fmt_stat(Stat.of([r.out["total_s"] for r in rs])),
                     fmt_s(percentile(lat, 50)), fmt_s(percentile(lat, 95)), fmt_s(percentile(lat, 99)),
                     fmt_stat(Stat.of([r.out["open_s"] for r in rs])),
                     f"{rs[0].out['senses']:,} / {rs[0].out['definitions']:,}"])
    sec.say(f"Ours goes through `{api}` for the candidates and "
            "`kg_rag.pipeline.evidence.fetch_evidence` for their definitions (what a selector gets: "
            "definitions, examples, labels, neighbours); the peer calls `wn.senses(lemma)` and "
            "`sense.synset().definition()`. Loop time excludes opening the store and the annotator's "
            "`warm_up` (lexicon, lemma and evidence indexes: read from the cache folder, built there by "
            "the first process after a load), shown apart as open.", "")
    sec.table(["contender", f"loop over {n:,} lemmas, median (min–max)", "p50 per lemma",
               "p95", "p99", "open", "senses / with definition"], rows)
    runs_table(sec, runs)
    ours_t = [r.out["total_s"] for r in o]
    peer_t = [r.out["total_s"] for r in p]
    rr = ratio_range(ours_t, peer_t)
    sec.targets.append(Target(TARGETS[0][0].replace("N lemmas", f"{n:,} lemmas"),
                              fmt_stat(Stat.of(ours_t)), fmt_stat(Stat.of(peer_t)), fmt_ratio(rr),
                              TARGETS[0][1], rr[0] <= 2.0))
    lat = [x for r in o for x in r.out["latencies"]]
    med = percentile(lat, 50)
    plat = [x for r in p for x in r.out["latencies"]]
    sec.targets.append(Target(TARGETS[1][0] + " (with definitions)", fmt_s(med),
                              fmt_s(percentile(plat, 50)), f"{med / percentile(plat, 50):.2f}×",
                              TARGETS[1][1], med < 1e-3))
