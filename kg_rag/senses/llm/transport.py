"""Wall-clock bounds on one chat request: a total deadline and a response size cap.

HTTP client timeouts are per socket operation: a server that sends its headers or body one byte
every two seconds never trips a 5 s read timeout and can hold a request for as long as it likes.
Here every socket operation of the request — connect, TLS, write, and each read of headers and
body — gets at most the time left until the request's :class:`Budget` deadline, and the bytes
read are counted against its cap. The budget lives in a thread-local set by :func:`bounded`
around the call (the ``openai`` sync client sends and reads in the calling thread), so no extra
thread holds a request and nothing outlives its deadline.

The bounds are installed as the network backend of the ``httpx2`` client's connection pools
(:func:`bounded_http_client`); the pools keep no public hook for it, so the install fails loudly
(``ConfigError``) when the client's internals change, rather than silently losing the bounds.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kg_rag.errors import ConfigError

if TYPE_CHECKING:
    import ssl

    import httpcore2
    import httpx2

#: bytes allowed beyond the body cap for the status line and headers
HEADER_ALLOWANCE = 64 * 1024

_local = threading.local()


@dataclass(slots=True)
class Budget:
    """What one request may spend; ``expired`` / ``too_large`` say which bound stopped it."""

    deadline: float            # a time.monotonic() instant
    max_bytes: int             # body cap (headers get HEADER_ALLOWANCE more)
    received: int = 0
    expired: bool = False
    too_large: bool = False
    #: why the response was refused from its headers alone ("" when it was not)
    refused: str = ""

    def left(self) -> float:
        return self.deadline - time.monotonic()


@contextmanager
def bounded(budget: Budget) -> Iterator[Budget]:
    """Every socket operation of this thread, inside the block, is bounded by ``budget``."""
    previous = getattr(_local, "budget", None)
    _local.budget = budget
    try:
        yield budget
    finally:
        _local.budget = previous


def _budget() -> Budget | None:
    return getattr(_local, "budget", None)


def _clamp(timeout: float | None, exc: type[Exception]) -> float | None:
    b = _budget()
    if b is None:
        return timeout
    left = b.left()
    if left <= 0:
        b.expired = True
        raise exc("the request's total deadline passed")
    return left if timeout is None else min(timeout, left)


def _timed_out() -> None:
    b = _budget()
    if b is not None and b.left() <= 0:
        b.expired = True


@functools.cache
def _make_classes() -> tuple[type[Any], type[Any]]:
    import httpcore2

    class BoundedStream(httpcore2.NetworkStream):
        def __init__(self, inner: httpcore2.NetworkStream) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            t = _clamp(timeout, httpcore2.ReadTimeout)
            try:
                data = self._inner.read(max_bytes, t)
            except httpcore2.ReadTimeout:
                _timed_out()
                raise
            b = _budget()
            if b is not None:
                b.received += len(data)
                if b.received > b.max_bytes + HEADER_ALLOWANCE:
                    b.too_large = True
                    raise httpcore2.ReadError(f"response larger than {b.max_bytes} bytes")
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            t = _clamp(timeout, httpcore2.WriteTimeout)
            try:
                self._inner.write(buffer, t)
            except httpcore2.WriteTimeout:
                _timed_out()
                raise

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                      timeout: float | None = None) -> httpcore2.NetworkStream:
            t = _clamp(timeout, httpcore2.ConnectTimeout)
            return BoundedStream(self._inner.start_tls(ssl_context, server_hostname, t))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class BoundedBackend(httpcore2.NetworkBackend):
        def __init__(self, inner: httpcore2.NetworkBackend) -> None:
            self._inner = inner

        def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                        local_address: str | None = None,
                        socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
            t = _clamp(timeout, httpcore2.ConnectTimeout)
            return BoundedStream(self._inner.connect_tcp(host, port, t, local_address,
                                                         socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None,
                                socket_options: Iterable[Any] | None = None
                                ) -> httpcore2.NetworkStream:
            t = _clamp(timeout, httpcore2.ConnectTimeout)
            return BoundedStream(self._inner.connect_unix_socket(path, t, socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return BoundedStream, BoundedBackend


def _check_headers(response: httpx2.Response) -> None:
    """Refuse, before its body is read, a response that announces more than the cap or comes
    compressed (the cap counts bytes on the wire; a compressed body could expand past it)."""
    import httpx2

    b = _budget()
    if b is None:
        return
    encoding = response.headers.get("content-encoding", "").strip().lower()
    length = response.headers.get("content-length", "").strip()
    if encoding not in ("", "identity"):
        b.refused = (f"the server sent its answer compressed ({encoding[:20]}) although asked "
                     "not to")
    elif length.isdigit() and int(length) > b.max_bytes:
        b.too_large = True
    else:
        return
    raise httpx2.DecodingError(b.refused or "response larger than the cap",
                               request=response.request)


def bounded_http_client(timeout: float) -> httpx2.Client:
    """An ``httpx2`` client (environment proxies honoured) whose every connection is bounded by
    the :class:`Budget` of the calling thread."""
    import httpx2

    _, backend_cls = _make_classes()
    client = httpx2.Client(timeout=timeout, follow_redirects=True,
                           event_hooks={"response": [_check_headers]})
    transports = [getattr(client, "_transport", None),
                  *getattr(client, "_mounts", {}).values()]
    installed = 0
    for transport in transports:
        if transport is None:
            continue  # a no-proxy mount
        pool = getattr(transport, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend"):
            client.close()
            raise ConfigError(
                "this version of the httpx2 client gives no way to bound an LLM request's total "
                "time; install the openai version kg-rag's 'llm' extra pins")
        pool._network_backend = backend_cls(pool._network_backend)
        installed += 1
    if not installed:
        client.close()
        raise ConfigError("the httpx2 client has no transport to bound; report this as a bug")
    return client


__all__ = ["HEADER_ALLOWANCE", "Budget", "bounded", "bounded_http_client"]
