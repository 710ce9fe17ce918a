"""service: ``kg-rag serve`` on the demo store under load (wrk), and hostile clients under load."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.context import KG, Ctx, need_cli
from bench.measure import PY, ROOT, BenchError, Stat, shell_line
from bench.report import Section, Target, fmt_ms

TITLE = "service: /ask and /sparql under load on the demo store; hostile requests under load"
TARGETS = [
    ("/ask (knowledge) throughput at p95 < 200 ms", "≥ 50 req/s at p95 < 200 ms"),
    ("/sparql simple SELECT throughput", "several hundred req/s (≥ 300)"),
    ("hostile requests under load: errors returned, others answered, no SERVICE fetch",
     "every attack refused; probes answered; listener sees 0"),
]

_LUA = """
local bodies = {BODIES}
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("{METHOD}", "{PATH}", {["Content-Type"] = "{CTYPE}"}, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests": %d, "duration_us": %d, "non2xx": %d, "errors": %d, '
    .. '"p50_us": %d, "p95_us": %d, "p99_us": %d, "max_us": %d}\\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
"""


def _lua(path: Path, method: str, url_path: str, ctype: str, bodies: list[str]) -> None:
    quoted = ", ".join("[==[" + b + "]==]" for b in bodies)
    script = (_LUA.replace("{METHOD}", method).replace("{PATH}", url_path)
              .replace("{CTYPE}", ctype).replace("{BODIES}", "{" + quoted + "}"))
    path.write_text(script, encoding="utf-8")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stop_server(proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Stop ``kg-rag serve`` as Ctrl-C would (it closes the store), killed after ``timeout``."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def _wait_health(base: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    _wait_url(f"{base}/health", proc, timeout)


def _wait_url(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    """Until ``url`` answers 200 (BenchError when ``proc`` exits first or ``timeout`` passes)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc.poll() is not None:
            raise BenchError(f"{shell_line([str(a) for a in proc.args])} exited with "
                             f"{proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise BenchError(f"{url} did not answer within {timeout:.0f} s")


def _wrk(script: Path, base: str, seconds: int, conns: int) -> tuple[dict[str, Any], str]:
    argv = ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--timeout", "10s", "-s", str(script), base]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60, cwd=ROOT)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not line:
        raise BenchError(f"wrk failed ({r.returncode}): {r.stderr.strip()[:300]}")
    d = json.loads(line[-1])
    d["rps"] = d["requests"] / (d["duration_us"] / 1e6)
    return d, shell_line(argv)


def run(ctx: Ctx, sec: Section) -> None:
    why = need_cli("serve")
    if why:
        sec.skip(why, TARGETS)
        return
    if shutil.which("wrk") is None:
        sec.skip("wrk is not installed (Debian: apt-get install -y wrk)", TARGETS)
        return
    work = ctx.dir("service")
    store = ctx.copy_store("demo", work / "store")
    seconds = ctx.pick(3, 15, 30)
    conns = 8
    qs = [json.loads(x) for x in (ROOT / "demo" / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    ask_bodies = [json.dumps({"question": q["text"], "language": q.get("lang"), "k": 10, "wsd": "knowledge"},
                             ensure_ascii=False) for q in qs]
    sparql_q = "SELECT ?s ?label WHERE { ?s <http://www.w3.org/2004/02/skos/core#prefLabel> ?label } LIMIT 10"
    ask_lua, sparql_lua = work / "ask.lua", work / "sparql.lua"
    _lua(ask_lua, "POST", "/ask", "application/json", ask_bodies)
    _lua(sparql_lua, "POST", "/sparql", "application/x-www-form-urlencoded",
         [urllib.parse.urlencode({"query": sparql_q})])
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [*KG, "--store", str(store), "serve", "--host", "127.0.0.1", "--port", str(port)]
    log = open(work / "serve.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                            env={**os.environ, "PYTHONHASHSEED": "0"})
    sec.scale = (f"demo store; wrk -t1 -c{conns}, {seconds} s per run, {ctx.repeat} interleaved runs "
                 f"per endpoint; loopback, the server and wrk share the 2 cores")
    ask_runs: list[dict[str, Any]] = []
    sparql_runs: list[dict[str, Any]] = []
    cmds: dict[str, str] = {}
    attack: dict[str, Any] = {}
    try:
        _wait_health(base, proc)
        # warm up: the annotator lexicon and the selector's graph are built on the first /ask;
        # every demo question once, one after the other (their decisions are then recorded, as
        # on a service that has seen its questions before), then a short wrk run
        for body in ask_bodies:
            req = urllib.request.Request(f"{base}/ask", data=body.encode("utf-8"), method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()
        _wrk(ask_lua, base, 3, 2)
        for _ in range(ctx.repeat):
            d, cmds["ask"] = _wrk(ask_lua, base, seconds, conns)
            ctx.log(f"    /ask: {d['rps']:.0f} req/s, p95 {d['p95_us'] / 1000:.0f} ms, non-2xx {d['non2xx']}")
            ask_runs.append(d)
            d, cmds["sparql"] = _wrk(sparql_lua, base, seconds, conns)
            ctx.log(f"    /sparql: {d['rps']:.0f} req/s, p95 {d['p95_us'] / 1000:.0f} ms")
            sparql_runs.append(d)
        # hostile clients under /ask load
        load_s = max(seconds * 2, 20)
        atk_argv = [PY, "-m", "bench.work_attack", base, ask_bodies[0], "3"]
        atk = subprocess.Popen(atk_argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        under, cmds["under"] = _wrk(ask_lua, base, load_s, conns)
        out, err = atk.communicate(timeout=600)
        if atk.returncode != 0:
            raise BenchError(f"the attack client failed: {err.decode()[-300:]}")
        attack = json.loads(out.decode().strip().splitlines()[-1])
        attack["load"] = under
        cmds["attack"] = shell_line(atk_argv)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, status, ru = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            ru = None
        log.close()
    if ru is not None:
        sec.say(f"Server process over the whole section: {ru.ru_utime + ru.ru_stime:.0f} s CPU, "
                f"peak RSS {ru.ru_maxrss / 1024:.0f} MB.", "")

    def rowset(name: str, runs: list[dict[str, Any]]) -> list[object]:
        rps = Stat.of([r["rps"] for r in runs])
        return [name, f"{rps.median:.0f} ({rps.lo:.0f}–{rps.hi:.0f})",
                fmt_ms(Stat.of([r["p50_us"] / 1000 for r in runs]).median),
                fmt_ms(Stat.of([r["p95_us"] / 1000 for r in runs]).median),
                fmt_ms(Stat.of([r["p99_us"] / 1000 for r in runs]).median),
                sum(r["non2xx"] for r in runs), sum(r["errors"] for r in runs)]

    sec.table(["endpoint", "req/s median (min–max)", "p50", "p95 (median of runs)", "p99",
               "non-2xx", "socket errors"],
              [rowset("POST /ask (knowledge, k=10; demo questions in turn)", ask_runs),
               rowset("POST /sparql (SELECT … LIMIT 10)", sparql_runs),
               rowset("POST /ask during the attacks", [attack["load"]])])
    rows = [[a["attack"], a["status"], f"{a['seconds']:.2f} s", a["body"].replace("|", "/")[:90]]
            for a in attack["attacks"]]
    sec.say("Hostile requests, sent one after another while wrk keeps /ask busy "
            "(status 0 = connection error):", "")
    sec.table(["request", "status", "answered in", "body (start)"], rows)
    probes = attack["probes"]
    sec.say(f"Probe client (one /ask every 0.25 s beside wrk): {attack['probes_ok_during']} of "
            f"{attack['probes_during']} answered 200 during the attack window "
            f"({attack['attack_window'][0]:.0f}–{attack['attack_window'][1]:.0f} s); "
            f"{sum(1 for p in probes if p[2] == 200)} of {len(probes)} overall. "
            f"Loopback listener behind SERVICE: {attack['listener_connections']} connection(s). "
            f"/health after the attacks: {attack['health_after']}.", "")
    sec.command("# server: " + shell_line(argv), "# /ask load: " + cmds.get("ask", ""),
                "# /sparql load: " + cmds.get("sparql", ""), "# attacks: " + cmds.get("attack", ""),
                f"# the wrk Lua scripts are written to {os.path.relpath(work, ROOT)}/*.lua")
    a_rps = Stat.of([r["rps"] for r in ask_runs]).median
    a_p95 = Stat.of([r["p95_us"] / 1000 for r in ask_runs]).median
    sec.targets.append(Target(TARGETS[0][0], f"{a_rps:.0f} req/s, p95 {a_p95:.0f} ms", "—", "—",
                              TARGETS[0][1], a_rps >= 50 and a_p95 < 200 and
                              all(r["non2xx"] == 0 for r in ask_runs)))
    s_rps = Stat.of([r["rps"] for r in sparql_runs]).median
    sec.targets.append(Target(TARGETS[1][0], f"{s_rps:.0f} req/s", "—", "—", TARGETS[1][1],
                              s_rps >= 300 and all(r["non2xx"] == 0 for r in sparql_runs)))
    refused = all(400 <= a["status"] < 600 for a in attack["attacks"])
    ok = (refused and attack["listener_connections"] == 0 and attack["health_after"] == 200
          and attack["probes_during"] > 0 and attack["probes_ok_during"] == attack["probes_during"])
    sec.targets.append(Target(TARGETS[2][0],
                              f"statuses {[a['status'] for a in attack['attacks']]}; probes "
                              f"{attack['probes_ok_during']}/{attack['probes_during']}; listener "
                              f"{attack['listener_connections']}", "—", "—", TARGETS[2][1], ok))
