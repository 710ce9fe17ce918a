"""HTTP requests to a remote endpoint under a total deadline.

A socket timeout bounds each read, not the request: an endpoint that sends its headers or body
one byte every two seconds never trips a 5 s timeout and holds the request for as long as it
likes (issue 22: ``kg-rag sparql`` still hanging at 120 s). Here a watchdog shuts the request's
sockets down when ``timeout`` seconds have passed since it started, whatever phase it is in, and
the request fails with :class:`DeadlineExceeded` — also when the cut made the body look complete.
"""

from __future__ import annotations

import functools
import http.client
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from typing import Any

from kg_rag.errors import StoreError

__all__ = ["Answer", "DeadlineExceeded", "check_complete", "request"]


class DeadlineExceeded(StoreError):
    title = "endpoint timeout"


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: Message
    body: bytes


class _Watch:
    """The sockets of one request; :meth:`fire` shuts them all down (now and later ones)."""

    def __init__(self) -> None:
        self.fired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            if self.fired:
                _shutdown(sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._socks:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Conn(http.client.HTTPConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self) -> None:
        super().connect()
        self._watch.add(self.sock)


class _TlsConn(http.client.HTTPSConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self) -> None:
        super().connect()
        self._watch.add(self.sock)


class _Handler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self._watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_Conn, watch=self._watch), req)


class _TlsHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self._watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_TlsConn, watch=self._watch), req,
                            context=self._context)  # type: ignore[attr-defined]


def request(method: str, url: str, body: bytes | None, headers: dict[str, str],
            timeout: float) -> Answer:
    """Send one request and read its whole answer within ``timeout`` seconds in total.

    Any status is returned (the caller decides); :class:`DeadlineExceeded` at the deadline;
    ``OSError``/``http.client.HTTPException`` when the endpoint cannot be reached or cuts the
    answer short."""
    watch = _Watch()
    timer = threading.Timer(timeout, watch.fire)
    timer.daemon = True
    opener = urllib.request.build_opener(_Handler(watch), _TlsHandler(watch))
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    timer.start()
    try:
        try:
            resp = opener.open(req, timeout=timeout)
            status = resp.status
        except urllib.error.HTTPError as e:   # an answer too: its body is read the same way
            resp, status = e, e.code
        with resp:
            data = resp.read()
            answer = Answer(status, resp.headers, data)
    except (OSError, http.client.HTTPException):
        if watch.fired:
            raise _late(url, timeout) from None
        raise
    finally:
        timer.cancel()
    if watch.fired:   # the cut may have ended a body that had no length: not complete
        raise _late(url, timeout)
    return answer


def _late(url: str, timeout: float) -> DeadlineExceeded:
    return DeadlineExceeded(f"the endpoint {url} did not answer completely in time (timeout "
                            f"{timeout:g}s, total for the request); nothing partial is used")


def check_complete(endpoint: str, ans: Answer) -> None:
    """StoreError when a 200 answer says that it is not the whole result (Virtuoso)."""
    state = (ans.headers.get("X-SQL-State") or "").strip()
    if state:   # S1TAT: an anytime query stopped at its time limit and answered what it had
        raise StoreError(f"the endpoint {endpoint} answered a partial result (X-SQL-State: "
                         f"{state[:40]}, an incomplete answer): not used; raise the endpoint's "
                         f"time limit or narrow the query")
    max_rows = ans.headers.get("X-SPARQL-MaxRows")
    if max_rows is not None:
        raise StoreError(f"the endpoint {endpoint} cut the result at its row limit "
                         f"(X-SPARQL-MaxRows: {max_rows.strip()[:20]}): not used; raise the "
                         f"endpoint's ResultSetMaxRows or narrow the query")
