"""What the HTTP server does with connections before a request reaches the app: a client has
``Settings.service_header_timeout`` seconds to send a request's headers, and a connection idle
that long between requests is closed (uvicorn closes idle keep-alive connections only after a
first response, and never times out a request's headers, so idle or dripping sockets could
exhaust the process's open files); the number of connections is capped below the open-file
limit; and repeated identical server log lines are rate-limited (a flood of bad connections must
not write megabytes of log)."""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

#: open files kept free for the store, logs and the /sparql workers
_SPARE_FILES = 64


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request's headers and for idleness
    (``Settings.service_header_timeout``, read from the environment: the same in every worker)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        from kg_rag.settings import settings

        super().connection_made(transport)
        self.header_timeout = settings().service_header_timeout
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        handle = getattr(self, "_deadline", None)
        if handle is not None:
            handle.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        busy = self.cycle is not None and not self.cycle.response_complete
        if not busy and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()   # the headers are in: the app's own deadlines take over

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()      # the next request's headers, or idleness, have the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def connection_limit(wanted: int) -> int:
    """``wanted``, but below the process's soft open-file limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft - _SPARE_FILES))


class RepeatFilter(logging.Filter):
    """Lets a log message through at most once per ``every`` seconds (by its text template);
    the next one that passes says how many were held back."""

    def __init__(self, every: float = 10.0) -> None:
        super().__init__()
        self.every = every
        self._last: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}:{record.msg}"
        now = time.monotonic()
        last, held = self._last.get(key, (0.0, 0))
        if now - last < self.every:
            self._last[key] = (last, held + 1)
            return False
        if held:
            record.msg = f"{record.msg} ({held} more like it in the last {self.every:g} s not logged)"
        self._last[key] = (now, 0)
        if len(self._last) > 1_000:
            self._last.clear()
        return True


def server_options(header_timeout: float, max_connections: int,
                   trusted_proxies: str | None = None) -> dict[str, Any]:
    """uvicorn.run keyword arguments for the guarded connections (and the log filter installed).

    ``X-Forwarded-For`` is read only from ``trusted_proxies`` (``Settings.service_trusted_proxies``,
    addresses or networks); without them it is ignored (uvicorn would trust 127.0.0.1)."""
    from kg_rag.service.ratelimit import parse_networks

    limit = RepeatFilter()
    for name in ("uvicorn.error", "asyncio"):
        logging.getLogger(name).addFilter(limit)
    proxies = parse_networks(trusted_proxies or "", "KG_RAG_SERVICE_TRUSTED_PROXIES")
    return {"http": GuardedH11Protocol, "limit_concurrency": connection_limit(max_connections),
            "timeout_keep_alive": min(5, max(1, int(header_timeout))),
            "proxy_headers": bool(proxies),
            "forwarded_allow_ips": [str(n) for n in proxies] or None}
