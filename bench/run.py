"""``python -m bench.run --shared ../shared/data [--only NAME[,NAME]] [--scale small|full] [--repeat N]``

Runs the sections in order, each side by side with its peers, and writes bench/REPORT.md.
A section that cannot run (a part of the pipeline not there yet, a peer missing) is reported as
not measured, with the reason; it never stops the others.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

from bench import report
from bench.context import SCALES, Ctx
from bench.measure import ROOT, Unavailable

# in run order: load builds the shared stores the later sections reuse
SECTIONS = ("load", "lookup", "decide", "annotate", "index", "retrieve", "grow", "service", "workers",
            "tokens", "cold", "svcmem", "soak")
#: run only when named (``make soak``): minutes of load, not a comparison with peers
ON_REQUEST = ("soak",)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[1])
    p.add_argument("--shared", default="../shared/data", help="the shared data folder")
    p.add_argument("--only", default="", help=f"comma-separated sections ({', '.join(SECTIONS)})")
    p.add_argument("--scale", choices=SCALES, default="small",
                   help="small (default, well under an hour), medium (grow and retrieve at a tenth "
                        "of the issue's sizes, the rest small) or full (the issue's sizes); tiny is "
                        "for the smoke test")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per contender (interleaved)")
    p.add_argument("--out", default=str(ROOT / "bench" / "out"), help="work folder (git-ignored)")
    p.add_argument("--report", default=str(ROOT / "bench" / "REPORT.md"), help="report to write")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the report from the sections recorded under --out, measure nothing")
    p.add_argument("--soak-minutes", type=float, default=10.0,
                   help="minutes of mixed load in the soak section (make soak)")
    p.add_argument("--reuse-stores", action="store_true",
                   help="reuse the shared stores of an earlier run when their input files are unchanged")
    return p.parse_args(argv)


def _loadavg() -> str:
    import os

    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    shared = Path(args.shared).resolve()
    if not (shared / "wordnet").is_dir():
        print(f"bench: skipped: the shared data folder {args.shared} (with wordnet/) is absent; "
              f"pass --shared PATH or make bench SHARED=PATH", file=sys.stderr)
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()] or [n for n in SECTIONS if n not in ON_REQUEST]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"bench: unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}",
              file=sys.stderr)
        return 2
    if args.repeat < 1:
        print("bench: --repeat must be at least 1", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    ctx = Ctx(shared=shared, out=out, scale=args.scale, repeat=args.repeat, reuse=args.reuse_stores)
    env_lines = report.environment()
    # sections of earlier runs (kept when this run has --only)
    state_file = out / "report-state.json"
    state: dict[str, dict[str, object]] = {}
    if state_file.exists():
        try:
            state = json.loads(state_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            state = {}
    if args.report_only:
        sections = [report.Section.from_json(dict(state[n])) for n in SECTIONS if n in state]
        report.write(Path(args.report), sections, ["python -m bench.run --report-only"], env_lines, 0.0)
        print(f"bench: report rewritten from {state_file}", file=sys.stderr)
        return 0
    if not args.only:
        state = {}
    # sections an earlier report shows but this machine has no record of: kept verbatim
    kept = {n: sec for n, sec in report.read_sections(Path(args.report), SECTIONS).items()
            if n not in state and n not in names} if args.only else {}
    t0 = time.perf_counter()
    cmdline = ["python -m bench.run", f"--shared {args.shared}", f"--scale {args.scale}",
               f"--repeat {args.repeat}"] + ([f"--only {args.only}"] if args.only else [])
    for name in names:
        mod = importlib.import_module(f"bench.sec_{name}")
        if name == "soak":
            mod.MINUTES = args.soak_minutes
        sec = report.Section(name=name, title=mod.TITLE)
        ctx.log(f"section {name}: {mod.TITLE}")
        ts = time.perf_counter()
        try:
            sec.say(f"Load average at the start of the section: {_loadavg()} (2 cores; the machine is "
                    "shared, so compare the side-by-side ratios rather than absolute times).", "")
            mod.run(ctx, sec)
        except Unavailable as e:
            ctx.log(f"section {name} not measured: {e}")
            sec.skip(str(e), [(w, t) for w, t in mod.TARGETS if not any(x.what == w for x in sec.targets)])
        except Exception as e:  # noqa: BLE001 - one failed section is reported, the rest still run
            tb = traceback.format_exc(limit=3)
            ctx.log(f"section {name} failed: {e}\n{tb}")
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            sec.skip(f"failed: {type(e).__name__}: {first[:300]}",
                     [(w, t) for w, t in mod.TARGETS if not any(x.what == w for x in sec.targets)])
        sec.seconds = time.perf_counter() - ts
        sec.measured = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} CPUs "
                        f"({report.cpu_model()}) by `{' '.join(cmdline)}`")
        if state_file.exists():  # another run (e.g. a long --only load) may have written since
            try:
                state = {**json.loads(state_file.read_text(encoding="utf-8")), **{
                    n: v for n, v in state.items() if n in names}}
            except json.JSONDecodeError:
                pass
        state[name] = sec.to_json()
        state_file.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8")
        # write after every section so that a long run leaves a report behind
        sections = [report.Section.from_json(dict(state[n])) if n in state else kept[n]
                    for n in SECTIONS if n in state or n in kept]
        report.write(Path(args.report), sections, cmdline, env_lines, time.perf_counter() - t0)
    ctx.log(f"report written to {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
