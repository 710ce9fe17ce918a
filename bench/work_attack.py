"""Hostile clients under load, and a well-behaved probe client beside them.

    python -m bench.work_attack BASE_URL ASK_JSON DELAY_S

After DELAY_S (the load tool is running by then) it sends, one after the other, each with its
own deadline: a nesting bomb, an endless cross-product query, a ``SERVICE`` query aimed at a
loopback listener of its own (which counts every connection it receives), and a 100 MB body.
Meanwhile a probe thread sends one ``/ask`` every 0.25 s and records status and latency, so the
report shows whether other clients kept getting answers while the attacks ran.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from typing import Any

import httpx


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections (and closes them)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()


def attacks(base: str, listener_port: int) -> list[tuple[str, str, dict[str, Any]]]:
    depth = 5000
    bomb = "SELECT * WHERE " + "{ " * depth + "?s ?p ?o " + "} " * depth
    # every quad of every graph, four times over: never ends on any real store
    cross = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g1 { ?a ?b ?c } GRAPH ?g2 { ?d ?e ?f } "
             "GRAPH ?g3 { ?g ?h ?i } GRAPH ?g4 { ?j ?k ?l } FILTER(STR(?c) != STR(?l)) }")
    service = f"SELECT * WHERE {{ SERVICE <http://127.0.0.1:{listener_port}/sparql> {{ ?s ?p ?o }} }}"
    big = b"query=" + b"x" * (100 * 2**20)
    return [
        ("nesting bomb (5,000 nested groups)", "POST",
         {"url": f"{base}/sparql", "data": {"query": bomb}}),
        ("endless cross-product query", "POST", {"url": f"{base}/sparql", "data": {"query": cross}}),
        ("SERVICE <http://127.0.0.1:PORT/sparql>", "POST",
         {"url": f"{base}/sparql", "data": {"query": service}}),
        ("100 MB body", "POST", {"url": f"{base}/sparql", "content": big,
                                 "headers": {"Content-Type": "application/x-www-form-urlencoded"}}),
    ]


def main(argv: list[str]) -> int:
    base, ask_json, delay = argv[0], argv[1], float(argv[2])
    listener = Listener()
    probes: list[tuple[float, float, int]] = []   # (t since start, latency, status)
    stop = threading.Event()
    t0 = time.perf_counter()

    def probe() -> None:
        with httpx.Client(timeout=30) as c:
            while not stop.is_set():
                a = time.perf_counter()
                try:
                    st = c.post(f"{base}/ask", json=json.loads(ask_json)).status_code
                except httpx.HTTPError:
                    st = 0
                probes.append((a - t0, time.perf_counter() - a, st))
                stop.wait(0.25)

    th = threading.Thread(target=probe, daemon=True)
    th.start()
    time.sleep(delay)
    results = []
    with httpx.Client(timeout=60) as c:
        for name, method, kw in attacks(base, listener.port):
            a = time.perf_counter()
            try:
                r = c.request(method, **kw)
                status, body = r.status_code, r.text[:200]
            except httpx.HTTPError as e:
                status, body = 0, f"{type(e).__name__}: {e}"[:200]
            results.append({"attack": name, "status": status, "seconds": time.perf_counter() - a,
                            "body": body, "at": a - t0})
    attack_end = time.perf_counter() - t0
    time.sleep(1.0)
    stop.set()
    th.join(timeout=35)
    listener.stop = True
    during = [p for p in probes if delay <= p[0] <= attack_end]
    health = 0
    try:
        health = httpx.get(f"{base}/health", timeout=10).status_code
    except httpx.HTTPError:
        pass
    print(json.dumps({"attacks": results, "listener_connections": listener.connections,
                      "probes": probes, "probes_during": len(during),
                      "probes_ok_during": sum(1 for p in during if p[2] == 200),
                      "attack_window": [delay, attack_end], "health_after": health}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
