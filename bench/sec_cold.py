"""cold: the first ``kg-rag ask`` in a new process on an OEWN store (issue 17)."""

from __future__ import annotations

from pathlib import Path

from bench.context import Ctx
from bench.corpus import wsd_sentences
from bench.measure import PY, Run, percentile, run_child
from bench.report import Section, Target, fmt_s, runs_table

TITLE = "cold start: the first `kg-rag ask` in a new process on an OEWN store"
TARGETS = [("first ask in a new process (OEWN store, disk caches present), median wall", "≤ 1.5 s")]


def run(ctx: Ctx, sec: Section) -> None:
    wsd = ctx.data("wsd") / "semeval2007.data.xml"
    if not wsd.exists():
        sec.skip(f"no {wsd}", TARGETS)
        return
    sents = [t for t, _ in wsd_sentences(wsd, "en")]
    n = ctx.pick(3, 10, 30)
    # a question never asked before in each process: no stored decision to reuse
    questions = [" ".join(t.split()[:8]) for t in sents[: 2 * n + 1]]
    store = ctx.copy_store("oewn", ctx.out / "cold" / "store")
    cache = ctx.fresh("cold", "cache")
    env = {"KG_RAG_CACHE_DIR": str(cache)}
    kg = str(Path(PY).parent / "kg-rag")

    def ask(q: str, *extra: str) -> Run:
        return run_child([kg, "--store", str(store), "ask", q, "--json", *extra], env=env)

    sec.scale = (f"{n} new processes per variant, each asking a different first 8 words of a "
                 f"semeval2007 sentence; store: OEWN only")
    first = ask(questions[0])  # builds the disk caches (knowledge base, lexicon)
    plain = [ask(q) for q in questions[1 : n + 1]]
    given = [ask(q, "--lang", "en") for q in questions[n + 1 : 2 * n + 1]]
    walls = [r.wall for r in plain]
    rows = [["first process ever (builds the disk caches)", fmt_s(first.wall), fmt_s(first.cpu),
             f"{first.rss_mb:.0f} MB"]]
    for name, rs in (("new process, caches on disk", plain), ("new process, `--lang en`", given)):
        rows.append([name, fmt_s(percentile([r.wall for r in rs], 50)),
                     fmt_s(percentile([r.cpu for r in rs], 50)), f"{max(r.rss_mb for r in rs):.0f} MB"])
    sec.say("Each row is one `kg-rag ask` process from start to exit (wall and CPU of the child, "
            "medians); the disk caches are the knowledge base and the lexicon under "
            "`KG_RAG_CACHE_DIR`.", "")
    sec.table(["process", "wall (median)", "CPU (median)", "peak RSS"], rows)
    runs_table(sec, {"kg-rag ask (caches on disk)": plain, "kg-rag ask --lang en": given})
    med = percentile(walls, 50)
    cpu = percentile([r.cpu for r in plain], 50)
    sec.targets.append(Target(TARGETS[0][0], f"{fmt_s(med)} (CPU {fmt_s(cpu)})", "—", "—",
                              TARGETS[0][1], med <= 1.5))
