"""load: ``kg-rag load`` of Open English WordNet vs ``oxigraph load`` of the same triples vs ``wn.add()``."""

from __future__ import annotations

import shutil

from bench.context import Ctx, need_cli
from bench.measure import BenchError, Run, Stat, dir_size, interleaved, run_child, worker
from bench.report import Section, Target, fmt_ratio, fmt_stat, ratio_range, runs_table

TITLE = "load a lexicon: Open English WordNet 2025 into an on-disk store"
TARGETS = [
    ("OEWN load, wall time vs `oxigraph load` of the same triples", "≤ 1.5× oxigraph"),
    ("OEWN load, wall time vs `oxigraph load` of the same triples (issue 17)", "≤ 1.2× oxigraph"),
    ("OEWN load, wall time vs `wn.add()`", "faster than wn.add() (< 1×)"),
    ("OEWN load, peak memory", "< 2 GB (issue 2)"),
]


def run(ctx: Ctx, sec: Section) -> None:
    src = ctx.oewn_file
    if not src.exists():
        sec.skip(f"{src} is absent", TARGETS)
        return
    sec.scale = f"the whole OEWN file ({src.name}); {ctx.repeat} interleaved repetitions"
    work = ctx.fresh("load")
    nt = work / "oewn.nt"
    state: dict[str, str] = {}

    def ours(i: int) -> Run:
        dest = work / f"ours-{i}"
        shutil.rmtree(dest, ignore_errors=True)
        r = run_child(ctx.load_argv(dest, [src]))
        r.out["store_bytes"] = dir_size(dest)
        if i == 0:
            # the same triples for the peer: the lexicon's named graph as N-Triples
            d = run_child(worker("work_dump", str(dest), str(nt)))
            state["graph"] = d.out["graph"]
            state["triples"] = str(d.out["triples"])
            sec.command("# the peer's input: " + d.command)
        if i == ctx.repeat - 1:
            final = ctx.out / "stores" / "oewn"
            shutil.rmtree(final, ignore_errors=True)
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(dest), final)
            ctx.register("oewn", final, [src])
        else:
            shutil.rmtree(dest, ignore_errors=True)
        return r

    def oxigraph(i: int) -> Run:
        dest = work / f"oxigraph-{i}"
        shutil.rmtree(dest, ignore_errors=True)
        argv = [str(ctx_oxigraph()), "load", "--location", str(dest), "--file", str(nt),
                "--graph", state["graph"]]
        r = run_child(argv)
        r.out["store_bytes"] = dir_size(dest)
        shutil.rmtree(dest, ignore_errors=True)
        return r

    def wn_add(i: int) -> Run:
        dest = work / f"wn-{i}"
        shutil.rmtree(dest, ignore_errors=True)
        r = run_child(worker("work_wn", "add", str(src), str(dest)))
        r.out["store_bytes"] = dir_size(dest)
        if i == ctx.repeat - 1:
            final = ctx.out / "stores" / "wn"
            shutil.rmtree(final, ignore_errors=True)
            shutil.move(str(dest), final)
            ctx.register("wn", final, [src])
        else:
            shutil.rmtree(dest, ignore_errors=True)
        return r

    if need_cli("load"):
        sec.say("`kg-rag load` does not exist yet: ours is measured through the API it will call, "
                "`KnowledgeGraph.load` (bench/work_load.py), in a process of its own.", "")
    jobs = {"kg-rag load": ours, "oxigraph load (N-Triples)": oxigraph, "wn.add()": wn_add}
    try:
        import wn  # noqa: F401
    except ImportError:
        del jobs["wn.add()"]
    runs = interleaved(jobs, ctx.repeat, ctx.log)
    sizes = {k: f"store {v[-1].out.get('store_bytes', 0) / 2**20:.0f} MB on disk" for k, v in runs.items()}
    sec.say(f"Triples of the lexicon graph: {int(state['triples']):,} "
            f"(named graph `{state['graph']}`), dumped once from our store as N-Triples "
            f"({nt.stat().st_size / 2**20:.0f} MB) for `oxigraph load`. `wn.add()` reads the same "
            f".xml.gz into its SQLite database (WN_DATA_DIR in a fresh folder, no network).", "")
    runs_table(sec, runs, sizes)
    ours_w = [r.wall for r in runs["kg-rag load"]]
    ox_w = [r.wall for r in runs["oxigraph load (N-Triples)"]]
    r_ox = ratio_range(ours_w, ox_w)
    ours_c = [r.cpu for r in runs["kg-rag load"]]

    def cpu_ratio(peer: str) -> str:
        pc = [r.cpu for r in runs[peer]]
        return f"; CPU {Stat.of(ours_c).median / Stat.of(pc).median:.2f}×"

    for (what, target), limit in zip(TARGETS[:2], (1.5, 1.2), strict=True):  # the same ratio, two bars
        sec.targets.append(Target(what, fmt_stat(Stat.of(ours_w)), fmt_stat(Stat.of(ox_w)),
                                  fmt_ratio(r_ox) + cpu_ratio("oxigraph load (N-Triples)"),
                                  target, r_ox[0] <= limit))
    if "wn.add()" in runs:
        wn_w = [r.wall for r in runs["wn.add()"]]
        r_wn = ratio_range(ours_w, wn_w)
        sec.targets.append(Target(TARGETS[2][0], fmt_stat(Stat.of(ours_w)), fmt_stat(Stat.of(wn_w)),
                                  fmt_ratio(r_wn) + cpu_ratio("wn.add()"), TARGETS[2][1], r_wn[0] < 1.0))
    else:
        sec.targets.append(Target(*TARGETS[2][:1], "—", "—", "—", TARGETS[2][1], None,
                                  "the wn library is not installed (pip install '.[eval]')"))
    peak = max(r.rss_mb for r in runs["kg-rag load"])
    sec.targets.append(Target(TARGETS[3][0], f"{peak:.0f} MB", "—", "—", TARGETS[3][1], peak < 2048))
    cpu = Stat.of([r.cpu for r in runs["kg-rag load"]]).median
    sec.say(f"Our load used {cpu / Stat.of(ours_w).median:.2f} CPU-seconds per wall second "
            "(2 cores; far below 1 means the machine was busy with other work). Wall ratios are "
            "the target's measure; CPU ratios are steadier on a shared machine.", "")


def ctx_oxigraph() -> str:
    from pathlib import Path

    from bench.measure import PY

    exe = Path(PY).parent / "oxigraph"
    if not exe.exists():
        raise BenchError("the oxigraph CLI is missing from .venv/bin (pip install '.[dev]')")
    return str(exe)
