"""A bounded mixed load against a running service: well-behaved and hostile clients side by side.

    python -m bench.work_soak BASE_URL SECONDS THREADS QUESTIONS_JSONL

Each thread sends, one after another until SECONDS have passed, a request drawn (seeded, per
thread) from a fixed mix: demo questions and questions of random words that were never asked
before (so that anything keyed by request content would grow), the page with such a question,
/annotate, /explain of an unknown question, /documents and /stats, SPARQL SELECTs (a few distinct and many
never seen before), and the attacks (nesting bombs, operator chains, a SERVICE query, an endless
cross product, a 1 MB body, broken JSON, unknown routes). It prints one JSON line: per request
kind, how many were answered (2xx), refused (4xx/5xx with a body) or failed (no answer), and
latency percentiles over the answered ones.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
import urllib.parse
from collections import defaultdict
from typing import Any

import httpx

WORDS = ("bank branch fabric tree rooster man bar wilderness brand restraint tap water river money "
         "bench sewing dress summer news urge sunrise crow field court plant spring bat light "
         "Hahn Bank Wasser Zweig Stoff בד בר גבר מיתג ענף שמלה חדשות زيت بنك شجرة").split()


def _question(rng: random.Random) -> str:
    # a question never asked before: random words plus a random token
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) + f" q{rng.getrandbits(40):x}"


def _sparql(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return "SELECT ?s ?l WHERE { ?s <http://www.w3.org/2004/02/skos/core#prefLabel> ?l } LIMIT 10"
    # never seen before: a distinct literal in every query
    return ("SELECT ?s WHERE { ?s <http://www.w3.org/2004/02/skos/core#prefLabel> ?l "
            f"FILTER(CONTAINS(STR(?l), \"{rng.choice(WORDS)}{rng.getrandbits(24):x}\")) }} LIMIT 5")


def mix(questions: list[dict[str, Any]]) -> list[tuple[str, float, Any]]:
    """(kind, weight, make(rng) → (method, path, kwargs))."""
    demo = [q["text"] for q in questions]
    depth = 3000

    def ask_demo(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "POST", "/ask", {"json": {"question": rng.choice(demo), "k": 5}}

    def ask_new(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "POST", "/ask", {"json": {"question": _question(rng), "k": 5}}

    def page(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "GET", "/?" + urllib.parse.urlencode({"q": _question(rng)}), {}

    def annotate(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "POST", "/annotate", {"json": {"text": _question(rng)}}

    def explain(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        iri = f"https://w3id.org/kg-rag/question/{rng.getrandbits(64):x}"
        return "GET", "/explain?" + urllib.parse.urlencode({"iri": iri}), {}

    def listing(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "GET", rng.choice(["/documents", "/stats", "/health", "/openapi.json"]), {}

    def sparql(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        return "POST", "/sparql", {"data": {"query": _sparql(rng)}}

    def attack(rng: random.Random) -> tuple[str, str, dict[str, Any]]:
        kind = rng.randrange(8)
        if kind == 0:
            q = "SELECT * WHERE " + "{ " * depth + "?s ?p ?o " + "} " * depth
        elif kind == 1:
            q = "SELECT * WHERE { ?s ?p ?o FILTER(" + "!" * 12000 + "true) }"
        elif kind == 2:
            q = "SELECT * WHERE { ?s ?p ?o FILTER(1" + "+1" * 20000 + " > 0) }"
        elif kind == 3:
            q = "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"
        elif kind == 4:
            q = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?a { ?s1 ?p1 ?o1 } GRAPH ?b { ?s2 ?p2 ?o2 } "
                 "GRAPH ?c { ?s3 ?p3 ?o3 } FILTER(STR(?o1) != STR(?o3)) }")
        elif kind == 5:
            return "POST", "/ask", {"content": b"{\"question\": " + b"x" * 2**20 + b"}",
                                    "headers": {"Content-Type": "application/json"}}
        elif kind == 6:
            return "POST", "/ask", {"content": b"{\"question\": \"broken",
                                    "headers": {"Content-Type": "application/json"}}
        else:
            return "GET", f"/no-such-route/{rng.getrandbits(32):x}", {}
        return "POST", "/sparql", {"data": {"query": q}}

    return [("ask (demo question)", 3, ask_demo), ("ask (new question)", 3, ask_new),
            ("page GET /?q=", 1, page), ("annotate", 1, annotate), ("explain (unknown question)", 1, explain),
            ("documents, stats, health", 1, listing),
            ("sparql SELECT", 4, sparql), ("attack", 1, attack)]


def main() -> int:
    base, seconds, threads, qfile = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(qfile, encoding="utf-8") as f:
        questions = [json.loads(x) for x in f if x.strip()]
    kinds = mix(questions)
    stats: dict[str, dict[str, Any]] = defaultdict(lambda: {"answered": 0, "refused": 0, "failed": 0,
                                                            "statuses": defaultdict(int), "ms": []})
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def run(i: int) -> None:
        rng = random.Random(i)
        names = [k for k, _, _ in kinds]
        weights = [w for _, w, _ in kinds]
        makers = {k: m for k, _, m in kinds}
        with httpx.Client(base_url=base, timeout=60) as client:
            while time.monotonic() < end:
                kind = rng.choices(names, weights)[0]
                method, path, kw = makers[kind](rng)
                t0 = time.perf_counter()
                try:
                    r = client.request(method, path, **kw)
                    status = r.status_code
                except httpx.HTTPError:
                    status = 0
                ms = (time.perf_counter() - t0) * 1000
                with lock:
                    s = stats[kind]
                    s["statuses"][status] += 1
                    if 200 <= status < 300:
                        s["answered"] += 1
                        s["ms"].append(ms)
                    elif status:
                        s["refused"] += 1
                    else:
                        s["failed"] += 1

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"seconds": round(wall, 1), "kinds": {}}
    for kind, s in stats.items():
        ms = sorted(s["ms"])

        def pct(q: float, ms: list[float] = ms) -> float | None:
            return round(ms[min(len(ms) - 1, int(q * len(ms)))], 1) if ms else None

        out["kinds"][kind] = {"answered": s["answered"], "refused": s["refused"], "failed": s["failed"],
                              "statuses": {str(k): v for k, v in sorted(s["statuses"].items())},
                              "p50_ms": pct(0.5), "p95_ms": pct(0.95)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
