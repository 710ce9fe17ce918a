"""soak: a bounded mixed load (questions, the page, SPARQL, attacks) against ``kg-rag serve
--read-only`` on the demo store, watching the server's memory and the store's size.

Not part of the default ``make bench`` run: ``make soak`` (``SOAK_MINUTES``, default 10) runs it
alone. The server's resident memory (its process and its children: the killable SPARQL
children come and go) is sampled every few seconds; "after warm-up" is its value once a fifth
of the time (at least a minute, at most three) has passed, "end" the mean of the last minute's
samples.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

from bench.context import KG, Ctx, need_cli
from bench.measure import PY, ROOT, BenchError, dir_size, shell_line
from bench.report import Section, Target
from bench.sec_service import _free_port, _wait_health, stop_server
from bench.sec_svcmem import memory

TITLE = "soak: mixed and hostile load for minutes on a read-only service; memory and store size"
TARGETS = [
    ("store size after the soak (serve --read-only)", "unchanged"),
    ("server RSS at the end vs after warm-up", "within 20 %"),
    ("requests that got no answer at all (connection errors)", "0"),
]

#: set by ``bench.run --soak-minutes``
MINUTES = 10.0
THREADS = 4


def _rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants (kB), summed."""
    return memory(pid)["rss_sum"]


def run(ctx: Ctx, sec: Section) -> None:
    why = need_cli("serve")
    if why:
        sec.skip(why, TARGETS)
        return
    seconds = max(30.0, MINUTES * 60) if ctx.scale != "tiny" else 20.0
    work = ctx.dir("soak")
    store = ctx.copy_store("demo", work / "store")
    size0 = dir_size(store)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [*KG, "--store", str(store), "serve", "--read-only", "--host", "127.0.0.1", "--port", str(port)]
    log = open(work / "serve.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()
    load: dict[str, Any] = {}
    qfile = ROOT / "demo" / "questions.jsonl"
    load_argv = [PY, "-m", "bench.work_soak", base, f"{seconds:.0f}", str(THREADS), str(qfile)]
    try:
        _wait_health(base, proc)
        t0 = time.monotonic()

        def sample() -> None:
            while not stop.is_set():
                samples.append((time.monotonic() - t0, _rss_kb(proc.pid)))
                stop.wait(5)

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        ctx.log(f"    soaking for {seconds / 60:.1f} min with {THREADS} client threads")
        r = subprocess.run(load_argv, capture_output=True, cwd=ROOT, timeout=seconds + 600)
        stop.set()
        th.join()
        if r.returncode != 0:
            raise BenchError(f"the load client failed: {r.stderr.decode()[-300:]}")
        load = json.loads(r.stdout.decode().strip().splitlines()[-1])
        alive = proc.poll() is None
    finally:
        stop.set()
        stop_server(proc)
        log.close()
    size1 = dir_size(store)
    warm_at = min(180.0, max(60.0, seconds / 5)) if seconds >= 120 else seconds / 3
    after = [kb for t, kb in samples if t >= warm_at]
    warm = after[0] if after else (samples[-1][1] if samples else 0)
    last = [kb for t, kb in samples if t >= samples[-1][0] - 60] if samples else [0]
    end = sum(last) / len(last)
    peak = max((kb for _, kb in samples), default=0)
    growth = (end - warm) / warm if warm else 0.0
    total = sum(k["answered"] + k["refused"] + k["failed"] for k in load["kinds"].values())
    failed = sum(k["failed"] for k in load["kinds"].values())
    sec.scale = (f"demo store, `serve --read-only`; {THREADS} client threads for {seconds / 60:.1f} min; "
                 "loopback, the server and the clients share the 2 cores")
    sec.say(f"{total} requests in {load['seconds']:.0f} s ({total / max(1.0, load['seconds']):.0f}/s); "
            f"server alive at the end: {'yes' if alive else 'NO'}.", "")
    rows = [[kind, k["answered"], k["refused"], k["failed"],
             ", ".join(f"{s}: {n}" for s, n in k["statuses"].items()),
             "-" if k["p50_ms"] is None else f"{k['p50_ms']:.0f} ms",
             "-" if k["p95_ms"] is None else f"{k['p95_ms']:.0f} ms"]
            for kind, k in sorted(load["kinds"].items())]
    sec.table(["request", "answered (2xx)", "refused (4xx/5xx)", "no answer", "statuses", "p50", "p95"], rows)
    every = max(1, len(samples) // 12)
    sec.say("Server RSS over time (process + children): "
            + " · ".join(f"{t / 60:.1f} min {kb / 1024:.0f} MB" for t, kb in samples[::every]) + ".", "")
    sec.table(["", "value"], [
        ["store size before / after", f"{size0:,} / {size1:,} bytes"],
        [f"RSS after warm-up ({warm_at / 60:.1f} min)", f"{warm / 1024:.0f} MB"],
        ["RSS at the end (mean of the last minute)", f"{end / 1024:.0f} MB"],
        ["RSS peak", f"{peak / 1024:.0f} MB"],
        ["growth after warm-up", f"{growth * 100:+.1f} %"],
    ])
    sec.command("# server: " + shell_line(argv), "# load: " + shell_line(load_argv))
    sec.targets.append(Target(TARGETS[0][0], f"{size0:,} → {size1:,} bytes", "—", "—", TARGETS[0][1],
                              size0 == size1))
    sec.targets.append(Target(TARGETS[1][0], f"{warm / 1024:.0f} → {end / 1024:.0f} MB ({growth * 100:+.1f} %)",
                              "—", "—", TARGETS[1][1], abs(growth) <= 0.20 and alive))
    sec.targets.append(Target(TARGETS[2][0], str(failed), "—", "—", TARGETS[2][1], failed == 0))
