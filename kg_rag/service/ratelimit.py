"""A per-client rate limit: a token bucket per client address, so one client sending as fast as
it can gets 429 answers and the others keep being served.

Each client may send ``Settings.service_rate`` requests a second on average and bursts of
``Settings.service_burst``; beyond that the request is answered at once with ``429 Too Many
Requests`` (problem+json) and ``Retry-After`` (seconds until the bucket holds a request again),
before its body is read. Every path counts except ``/health``, which monitoring must always
reach.

**Who a client is.** The address of the TCP peer (an IPv6 address by its /64, which one host
usually holds whole). ``X-Forwarded-For`` is believed only from the proxies named in
``Settings.service_trusted_proxies`` (uvicorn then puts the forwarded address in the request; see
:func:`kg_rag.service.connections.server_options`), never by default. Addresses in
``Settings.service_rate_exempt`` (default the loopback addresses ``127.0.0.1`` and ``::1``: the
CLI on the same machine works through the service) are not limited. At most
:data:`MAX_CLIENTS` buckets are kept; the client seen longest ago is dropped first (a bucket
dropped when full loses nothing). The buckets belong to one process: with ``serve --workers N``
a client may send N times the rate.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from kg_rag.errors import ConfigError
from kg_rag.service.problems import problem

MAX_CLIENTS = 10_000
UNLIMITED_PATHS = frozenset({"/health"})

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(raw: str, setting: str) -> tuple[Network, ...]:
    """``"127.0.0.1, ::1 10.0.0.0/8"`` as networks; ``"none"`` (or nothing) is none."""
    out: list[Network] = []
    for part in raw.replace(",", " ").split():
        if part.lower() == "none":
            continue
        try:
            out.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ConfigError(f"{setting} has {part!r}, which is not an IP address or network; "
                              f"give addresses or networks separated by commas (or none)") from None
    return tuple(out)


def client_key(host: str) -> str:
    """The bucket of a peer address: IPv4 as it is, IPv6 by its /64 (mapped IPv4 as IPv4)."""
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr, 64), strict=False))
    return str(addr)


class Buckets:
    """Token buckets by client: ``rate`` requests a second, bursts of ``burst``."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = MAX_CLIENTS) -> None:
        if rate <= 0 or burst < 1:
            raise ConfigError("the rate limit needs a rate above 0 and a burst of at least 1")
        self.rate = rate
        self.burst = float(burst)
        self.clock = clock
        self.max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, when

    def take(self, key: str) -> float:
        """0 when ``key`` may go on (one request taken), else the seconds until it may."""
        now = self.clock()
        tokens, then = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[key] = (tokens, now)        # the newest at the end
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)     # the client seen longest ago
        return wait

    def __len__(self) -> int:
        return len(self._buckets)


class RateLimit:
    """ASGI middleware: :class:`Buckets` by client address (see the module doc)."""

    def __init__(self, app: ASGIApp, buckets: Buckets, exempt: tuple[Network, ...] = ()) -> None:
        self.app = app
        self.buckets = buckets
        self.exempt = exempt

    def _exempt(self, host: str) -> bool:
        try:
            addr = ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        return any(addr in net for net in self.exempt)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNLIMITED_PATHS:
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        host = str(client[0]) if client else "-"
        if not self._exempt(host):
            wait = self.buckets.take(client_key(host))
            if wait > 0:
                after = max(1, math.ceil(wait))
                resp = problem(429, "too many requests",
                               f"this client sent more than {self.buckets.rate:g} requests a "
                               f"second (bursts of {self.buckets.burst:g}); retry after {after} s",
                               {"Retry-After": str(after)})
                await resp(scope, receive, send)
                return
        await self.app(scope, receive, send)


__all__ = ["MAX_CLIENTS", "Buckets", "RateLimit", "client_key", "parse_networks"]
