"""grow: index the corpus in stages; time per document, ask p95 and store size per document."""

from __future__ import annotations

from bench.context import Ctx, need_cli
from bench.docstore import build, sizes
from bench.measure import percentile
from bench.report import Section, Target, fmt_s

TITLE = "grow: index in stages; time per document, ask latency and store size as the corpus grows"
TARGETS = [
    ("index time per document, largest vs smallest stage", "flat (±30%)"),
    ("ask p95 latency growth vs corpus growth", "sub-linear (p95 ratio < document ratio)"),
]


def run(ctx: Ctx, sec: Section) -> None:
    why = need_cli("index")
    if why:
        sec.skip(why, TARGETS)
        return
    st_n = sizes(ctx)
    sec.scale = (f"stages of {', '.join(f'{n:,}' for n in st_n)} documents (the issue's "
                 f"10k/30k/100k{' ' if ctx.scale == 'full' else ' scaled down; --scale full for them'}); "
                 "each stage indexed once, as an increment on the previous one")
    b = build(ctx)
    rows = []
    per_doc = []
    p95 = []
    for s in b.stages:
        idx_s = float(s.index.out.get("seconds", s.index.wall))
        per_doc.append(idx_s / s.added)
        lat = s.ask.out.get("latencies", []) if s.ask else []
        p95.append(percentile(lat, 95) if lat else float("nan"))
        rows.append([f"{s.docs:,}", f"{s.added:,}", fmt_s(s.index.wall), fmt_s(idx_s),
                     f"{per_doc[-1] * 1000:.1f} ms", f"{s.index.cpu / s.index.wall:.2f}",
                     f"{s.index.rss_mb:.0f} MB",
                     f"{(s.store_bytes - b.base_bytes) / 2**20:.0f} MB",
                     f"{(s.store_bytes - b.base_bytes) / s.docs / 1024:.1f} KiB",
                     fmt_s(percentile(lat, 50)) if lat else "—", fmt_s(p95[-1]) if lat else "—",
                     s.ask.out.get("no_concept", "?") if s.ask else "—"])
    sec.say("Each stage adds documents to the same store with `kg-rag index` (lexicons loaded: "
            "OEWN + OMW + UNESCO). Index time per document uses our own `IndexReport.seconds` "
            "(the index step after the process start and lexicon build); wall includes them. "
            "Store size is the growth of the store folder over the lexicon-only store. `ask`: "
            f"{b.stages[0].ask.out.get('questions', '?') if b.stages[0].ask else '?'} questions, "
            "knowledge selector, k=10, on the store after the stage, the questions it records "
            "forgotten after it (3 warm-up questions not counted; questions with no known "
            "concept refused and counted).", "")
    sec.table(["documents", "added", "index wall", "index step", "per document", "CPU/wall",
               "peak RSS", "store growth", "per document", "ask p50", "ask p95", "no concept"], rows)
    for s in b.stages:
        sec.command(f"# stage {s.docs:,}: " + s.index.command)
    if b.stages[-1].ask:
        sec.command("# ask: " + b.stages[-1].ask.command)
    rel = [x / per_doc[0] for x in per_doc]
    sec.targets.append(Target(TARGETS[0][0], f"{per_doc[-1] * 1000:.1f} ms ({st_n[-1]:,})",
                              f"{per_doc[0] * 1000:.1f} ms ({st_n[0]:,})",
                              f"{rel[-1]:.2f}× (stages: {', '.join(f'{x:.2f}' for x in rel)})",
                              TARGETS[0][1] + " of the first stage, every stage",
                              all(0.7 <= x <= 1.3 for x in rel)))
    if len(p95) >= 2 and p95[0] == p95[0] and p95[-1] == p95[-1]:
        growth = p95[-1] / p95[0]
        docs_growth = st_n[-1] / st_n[0]
        sec.targets.append(Target(TARGETS[1][0], f"p95 {fmt_s(p95[-1])} ({st_n[-1]:,})",
                                  f"p95 {fmt_s(p95[0])} ({st_n[0]:,})",
                                  f"{growth:.2f}× for {docs_growth:.0f}× documents",
                                  TARGETS[1][1], growth < docs_growth))
    else:
        sec.targets.append(Target(TARGETS[1][0], "—", "—", "—", TARGETS[1][1], None,
                                  "no answered questions"))
