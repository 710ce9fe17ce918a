"""workers: ``kg-rag serve --workers 1`` against ``--workers 2`` over one ``oxigraph serve``."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from bench.context import KG, Ctx
from bench.measure import PY, ROOT, BenchError, Stat, Unavailable, shell_line
from bench.report import Section, Target, fmt_ms
from bench.sec_service import _free_port, _wait_health, _wait_url, stop_server

TITLE = "workers: /ask over one oxigraph serve with 1 and with 2 service processes"
TARGETS = [("/ask throughput, 2 workers ÷ 1 worker, over one oxigraph serve", "report")]


def _post(url: str, body: bytes) -> float:
    t = time.perf_counter()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        r.read()
        if r.status != 200:
            raise BenchError(f"/ask answered {r.status}")
    return time.perf_counter() - t


def _load(url: str, bodies: list[bytes], seconds: float, clients: int) -> dict[str, float]:
    """``clients`` threads asking in turn for ``seconds``: requests per second and latencies."""
    stop = time.perf_counter() + seconds
    lat: list[float] = []

    def client(i: int) -> None:
        j = i
        while time.perf_counter() < stop:
            lat.append(_post(url, bodies[j % len(bodies)]))
            j += 1

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    took = time.perf_counter() - t0
    lat.sort()
    return {"rps": len(lat) / took, "p50_ms": 1000 * lat[len(lat) // 2],
            "p95_ms": 1000 * lat[int(len(lat) * 0.95)]}


def run(ctx: Ctx, sec: Section) -> None:
    oxigraph = Path(PY).parent / "oxigraph"
    if not oxigraph.is_file():
        raise Unavailable("the oxigraph server CLI is not installed in the venv")
    work = ctx.fresh("workers")
    work.mkdir()
    seconds, clients = ctx.pick(3, 10, 20), 8
    qs = [json.loads(x) for x in (ROOT / "demo" / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    bodies = [json.dumps({"question": q["text"], "language": q.get("lang"), "k": 10},
                         ensure_ascii=False).encode("utf-8") for q in qs]
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}/query"
    ox = subprocess.Popen([str(oxigraph), "serve", "--location", str(work / "ox"), "--bind",
                           f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    cmds: list[str] = []
    try:
        _wait_url(endpoint + "?query=ASK%7B%7D", ox)
        for argv in ([*KG, "--endpoint", endpoint, "load", str(ROOT / "demo" / "thesaurus.ttl"),
                      str(ROOT / "demo" / "dictionary.ttl")],
                     [*KG, "--endpoint", endpoint, "index", str(ROOT / "demo" / "documents")]):
            subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
            cmds.append(shell_line(argv).replace(endpoint, "http://127.0.0.1:PORT/query"))
        for _ in range(ctx.repeat):
            for workers in (1, 2):   # interleaved
                sport = _free_port()
                argv = [*KG, "--endpoint", endpoint, "serve", "--port", str(sport), "--workers",
                        str(workers)]
                proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": "0"})
                try:
                    base = f"http://127.0.0.1:{sport}"
                    _wait_health(base, proc)
                    _load(base + "/ask", bodies, 2, clients)   # warm every worker
                    d = _load(base + "/ask", bodies, seconds, clients)
                    ctx.log(f"    {workers} worker(s): {d['rps']:.1f} req/s, p95 {d['p95_ms']:.0f} ms")
                    runs[workers].append(d)
                    shown = (shell_line(argv).replace(endpoint, "http://127.0.0.1:PORT/query")
                             .replace(f"--port {sport}", "--port SERVE_PORT"))
                    if shown not in cmds:
                        cmds.append(shown)
                finally:
                    stop_server(proc, 30)
    finally:
        ox.terminate()
        ox.wait(timeout=30)
    sec.scale = (f"demo vocabulary and documents in one oxigraph serve; {clients} client threads, "
                 f"{seconds} s per run, {ctx.repeat} interleaved runs each; loopback, everything "
                 f"shares the machine's 2 cores")
    rows: list[list[object]] = []
    med: dict[int, float] = {}
    for w, rs in runs.items():
        rps = Stat.of([r["rps"] for r in rs])
        med[w] = rps.median
        rows.append([f"serve --workers {w}", f"{rps.median:.1f} ({rps.lo:.1f}–{rps.hi:.1f})",
                     fmt_ms(Stat.of([r["p50_ms"] for r in rs]).median),
                     fmt_ms(Stat.of([r["p95_ms"] for r in rs]).median)])
    sec.table(["service", "/ask req/s median (min–max)", "p50", "p95"], rows)
    sec.command(*cmds)
    ratio = med[2] / med[1] if med[1] else float("nan")
    sec.targets.append(Target(TARGETS[0][0], f"{med[2]:.1f} req/s", f"{med[1]:.1f} req/s (1 worker)",
                              f"{ratio:.2f}×", TARGETS[0][1], True))
