"""The per-client token buckets (issue 21) on a clock the test moves: bursts, refill, the wait
until the next request, one bucket per client (IPv6 by its /64), a bounded number of buckets,
the exempt networks and their setting's errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kg_rag.errors import ConfigError
from kg_rag.service.ratelimit import Buckets, RateLimit, client_key, parse_networks
from kg_rag.settings import load_settings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate() -> None:
    clock = Clock()
    b = Buckets(rate=2, burst=5, clock=clock)
    assert [b.take("a") for _ in range(5)] == [0.0] * 5
    assert b.take("a") == pytest.approx(0.5)      # one more in half a second at 2/s
    clock.now += 0.5
    assert b.take("a") == 0.0
    assert b.take("a") > 0
    clock.now += 60                                # refills up to the burst, no further
    assert [b.take("a") for _ in range(5)] == [0.0] * 5 and b.take("a") > 0


def test_refused_requests_do_not_push_the_wait_further() -> None:
    clock = Clock()
    b = Buckets(rate=1, burst=1, clock=clock)
    assert b.take("a") == 0.0
    waits = [b.take("a") for _ in range(100)]
    assert max(waits) == pytest.approx(1.0)        # hammering does not lengthen the wait
    clock.now += 1
    assert b.take("a") == 0.0


def test_one_client_over_its_rate_leaves_the_others_alone() -> None:
    b = Buckets(rate=1, burst=3, clock=Clock())
    for _ in range(50):
        b.take("10.0.0.1")
    assert b.take("10.0.0.1") > 0
    assert [b.take("10.0.0.2") for _ in range(3)] == [0.0] * 3


def test_client_keys() -> None:
    assert client_key("192.0.2.7") == "192.0.2.7"
    # one IPv6 host usually holds a whole /64: its addresses share a bucket
    assert client_key("2001:db8:1:2::1") == client_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("fe80::1%eth0") == "fe80::/64"
    assert client_key("testclient") == "testclient"


def test_the_buckets_are_bounded_and_drop_the_client_seen_longest_ago() -> None:
    clock = Clock()
    b = Buckets(rate=1, burst=1, clock=clock, max_clients=100)
    b.take("old")
    for i in range(1_000):
        clock.now += 0.001
        b.take(f"c{i}")
    assert len(b) == 100
    assert b.take("c999") > 0          # a recent client keeps its (empty) bucket
    assert b.take("old") == 0.0        # dropped: a fresh bucket


def test_networks_setting() -> None:
    nets = parse_networks("127.0.0.1, ::1 10.0.0.0/8", "KG_RAG_SERVICE_RATE_EXEMPT")
    assert [str(n) for n in nets] == ["127.0.0.1/32", "::1/128", "10.0.0.0/8"]
    assert parse_networks("none", "X") == () == parse_networks("", "X")
    with pytest.raises(ConfigError, match="KG_RAG_SERVICE_RATE_EXEMPT has 'localhost'"):
        parse_networks("localhost", "KG_RAG_SERVICE_RATE_EXEMPT")


def test_settings_defaults_and_off() -> None:
    cfg = load_settings({})
    assert (cfg.service_rate, cfg.service_burst) == (50.0, 100)
    assert cfg.service_rate_exempt == "127.0.0.1,::1" and cfg.service_trusted_proxies is None
    assert load_settings({"KG_RAG_SERVICE_RATE": "0"}).service_rate == 0   # off
    with pytest.raises(ConfigError, match="KG_RAG_SERVICE_BURST"):
        load_settings({"KG_RAG_SERVICE_BURST": "0"})


def _call(mw: RateLimit, host: str, path: str = "/sparql") -> tuple[int, dict[str, str]]:
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    mw.app = app
    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b"",
             "client": (host, 40000)}
    asyncio.run(mw(scope, receive, send))
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}


def test_the_middleware_answers_429_with_retry_after_and_spares_health_and_exempt() -> None:
    clock = Clock()
    mw = RateLimit(lambda *a: None, Buckets(rate=0.5, burst=2, clock=clock),  # type: ignore[arg-type]
                   exempt=parse_networks("127.0.0.1,::1", "X"))
    assert [_call(mw, "192.0.2.1")[0] for _ in range(2)] == [200, 200]
    status, headers = _call(mw, "192.0.2.1")
    assert status == 429 and headers["retry-after"] == "2"        # 1 token at 0.5/s
    assert headers["content-type"] == "application/problem+json"
    assert _call(mw, "192.0.2.1", "/health")[0] == 200
    assert _call(mw, "192.0.2.2")[0] == 200
    assert all(_call(mw, h)[0] == 200 for h in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] * 20)
    clock.now += 2
    assert _call(mw, "192.0.2.1")[0] == 200
