"""svcmem: the memory of ``kg-rag serve --read-only`` with Open English WordNet loaded, once it
has answered questions (issue 17: "the service with OEWN loaded ≤ 1.5 GB").

Two stores the earlier sections built: OEWN alone (English questions) and OEWN + OMW es/fr/he +
UNESCO (questions in all four languages). The server is started on a store, asked every
question once over HTTP (``POST /ask``, knowledge selector) and a few SPARQL SELECTs (``POST
/sparql``, answered by forked children), and then its memory is read from
``/proc``: the resident set of the server process, and the proportional set size (PSS) of the
process and its children — forked children share most of their pages with the parent, so the
sum of their resident sets counts those pages once per child, while PSS splits each shared page
among the processes that map it and sums to what the service takes from the machine. The
target is read on PSS.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx

from bench.context import KG, Ctx, need_cli
from bench.corpus import make_questions
from bench.measure import ROOT, BenchError, percentile, shell_line
from bench.report import Section, Target, fmt_s
from bench.sec_service import _free_port, _wait_health, stop_server

TITLE = "service memory: `kg-rag serve --read-only` with OEWN loaded, after answering questions"
TARGETS = [("service with OEWN loaded, memory after answering questions (PSS of the process tree)",
            "≤ 1.5 GB (issue 17)")]
LIMIT_MB = 1536
#: SPARQL SELECTs sent after the questions
SPARQL = 8
SPARQL_QUERY = "SELECT ?s ?l WHERE { ?s <http://www.w3.org/2004/02/skos/core#prefLabel> ?l } LIMIT %d"


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        # a child belongs to the thread that forked it: every thread's list (the query
        # children are forked by the server's request threads, not its main thread)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    return out


def _field_kb(path: str, name: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory(pid: int) -> dict[str, int]:
    """kB: the server's own RSS, the tree's summed RSS and summed PSS, and how many processes."""
    pids = _tree(pid)
    return {"rss_main": _field_kb(f"/proc/{pid}/status", "VmRSS"),
            "rss_sum": sum(_field_kb(f"/proc/{p}/status", "VmRSS") for p in pids),
            "pss_sum": sum(_field_kb(f"/proc/{p}/smaps_rollup", "Pss") for p in pids),
            "processes": len(pids)}


def _serve(ctx: Ctx, name: str, store: Path, questions: list[dict[str, str]], work: Path) -> dict[str, object]:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    argv = [*KG, "--store", str(store), "serve", "--read-only", "--host", "127.0.0.1", "--port", str(port)]
    log = open(work / f"serve-{name}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        _wait_health(base, proc, timeout=600)
        started = memory(proc.pid)
        lat: list[float] = []
        statuses: dict[int, int] = {}
        with httpx.Client(timeout=300) as client:
            for q in questions:
                t0 = time.perf_counter()
                r = client.post(f"{base}/ask", json={"question": q["text"], "language": q["lang"],
                                                     "k": 10, "wsd": "knowledge"})
                lat.append(time.perf_counter() - t0)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            for i in range(SPARQL):   # the endpoint's forked query children are part of the service
                r = client.post(f"{base}/sparql", data={"query": SPARQL_QUERY % (i + 1)})
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        time.sleep(1.0)
        after = memory(proc.pid)
        if proc.poll() is not None:
            raise BenchError(f"the server on the {name} store exited while answering")
    finally:
        stop_server(proc)
        log.close()
    return {"argv": argv, "started": started, "after": after, "latencies": lat, "statuses": statuses}


def run(ctx: Ctx, sec: Section) -> None:
    why = need_cli("serve")
    if why:
        sec.skip(why, TARGETS)
        return
    work = ctx.dir("svcmem")
    n = ctx.pick(8, 60, 200)
    make_questions(ctx.shared, work / "questions.jsonl", n)
    qs = [json.loads(x) for x in (work / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    runs = {
        "OEWN": (ctx.store("oewn"), [q for q in qs if q["lang"] == "en"]),
        "OEWN + OMW es/fr/he + UNESCO": (ctx.store("lex"), qs),
    }
    sec.scale = (f"the bench's OEWN store and its OEWN + OMW + UNESCO store, each served read-only "
                 f"and asked {n} questions (the English ones only on OEWN alone) and {SPARQL} SPARQL "
                 "SELECTs, once")
    rows = []
    results = {}
    for name, (store, questions) in runs.items():
        ctx.log(f"    serving the {name} store, {len(questions)} questions")
        res = results[name] = _serve(ctx, name.split()[0].lower(), store, questions, work)
        s, a = res["started"], res["after"]
        lat = res["latencies"]
        rows.append([name, str(len(questions)),
                     ", ".join(f"{k}: {v}" for k, v in sorted(res["statuses"].items())),
                     fmt_s(percentile(lat, 50)), f"{s['rss_main'] / 1024:.0f} MB",
                     f"{a['rss_main'] / 1024:.0f} MB", f"{a['rss_sum'] / 1024:.0f} MB ({a['processes']})",
                     f"{a['pss_sum'] / 1024:.0f} MB"])
        sec.command(f"# {name}: " + shell_line(res["argv"]))
    sec.say("Memory read from `/proc` after every question was answered once (RSS: resident set; "
            "PSS: each shared page split among the processes mapping it — the forked SPARQL "
            "children share the server's pages, so their summed RSS counts those pages once per "
            "child).", "")
    sec.table(["store", "questions", "statuses", "ask p50", "server RSS at start",
               "server RSS after", "tree RSS summed (processes)", "tree PSS"], rows)
    main = results["OEWN"]["after"]
    if not main["pss_sum"] or not main["rss_main"]:   # no /proc (or no smaps_rollup): not measured
        sec.targets.append(Target(TARGETS[0][0], "—", "—", "—", TARGETS[0][1], None,
                                  "the server's memory could not be read from /proc"))
        return
    sec.targets.append(Target(TARGETS[0][0], f"{main['pss_sum'] / 1024:.0f} MB "
                              f"(server RSS {main['rss_main'] / 1024:.0f} MB)", "—", "—",
                              TARGETS[0][1], main["pss_sum"] / 1024 <= LIMIT_MB))
