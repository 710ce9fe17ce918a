"""Errors as RFC 9457 (7807) problem+json: ``{type, title, status, detail}``.

Every :class:`kg_rag.errors.KgRagError` maps through its ``http_status`` and ``title``; Starlette's
HTTP errors keep their status; anything unexpected becomes a 500 problem without a traceback (the
traceback goes to the log) and the service stays up. Every ``detail`` is one line of at most
:data:`MAX_DETAIL` characters (:func:`short_detail`), and a store error's names no path of the
machine the service runs on (:func:`scrub_paths`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kg_rag.errors import KgRagError, RateLimitedError, StoreError

log = logging.getLogger(__name__)

PROBLEM = "application/problem+json"


#: the longest ``detail`` a problem carries (characters); a longer one keeps its start and its
#: end (which says what to do) around a "…": an error that quotes the input never echoes it all,
#: and the service's own longest messages (the LLM set-up advice, ~330) stay whole
MAX_DETAIL = 500
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x85\v\f]+")


def short_detail(text: str, limit: int = MAX_DETAIL) -> str:
    """``text`` as a problem's one-line ``detail``: line breaks become spaces, a lone surrogate
    is shown as its escape (it cannot be encoded), and at most ``limit`` characters are kept —
    the first two thirds and the last third, joined by "…"."""
    text = _LINE_BREAKS.sub(" ", text).strip()
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 3
    head = limit - 1 - tail
    return text[:head].rstrip() + "…" + text[len(text) - tail:].lstrip()


class ProblemResponse(JSONResponse):
    media_type = PROBLEM

    def render(self, content: Any) -> bytes:
        import json

        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def problem_body(status: int, title: str, detail: str = "", **extra: Any) -> dict[str, Any]:
    """The problem document; every problem the service sends (and each failed item of a batch)
    is made here, so every ``detail`` is :func:`short_detail`."""
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status}
    detail = short_detail(detail)
    if detail:
        body["detail"] = detail
    body.update(extra)
    return body


def problem(status: int, title: str, detail: str = "", headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    return ProblemResponse(problem_body(status, title, detail, **extra), status_code=status,
                           headers=headers)


_PATH = re.compile(r"(?<![\w:/.])/(?:[^\s:;,'\"/]+/)*[^\s:;,'\"/]*")
#: "the store at PATH", "store folder PATH": the store is the one the service serves
_STORE_PATH = re.compile(r"\b(store(?: folder)?)(?: at)? " + _PATH.pattern)


def scrub_paths(text: str) -> str:
    """``text`` without the absolute file paths of the machine the service runs on: store errors
    name the store's folder for the CLI (``… failed on the store at /srv/kg: …``), which here is
    just "the store"; any other path is cut to its last part (a store file's name, ``000123.log``)."""
    text = _STORE_PATH.sub(r"\1", text)
    return _PATH.sub(_last_part, text)


def _last_part(match: re.Match[str]) -> str:
    path = match.group()
    inner = path.rstrip("/")
    if "/" not in inner[1:]:      # "/" or one part: not a path of this machine worth hiding
        return path
    return inner.rsplit("/", 1)[-1]


def from_error(err: KgRagError) -> Response:
    headers: dict[str, str] = {}
    if isinstance(err, RateLimitedError) and err.retry_after:
        headers["Retry-After"] = str(max(1, int(round(err.retry_after))))
    extra = getattr(err, "problem_headers", None)
    if isinstance(extra, dict):
        headers.update(extra)
    detail = scrub_paths(str(err)) if isinstance(err, StoreError) else str(err)
    return problem(err.http_status, err.title, detail, headers or None)


async def on_kg_rag_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, KgRagError)
    if exc.http_status >= 500:
        log.warning("%s %s: %s", request.method, request.url.path, exc)
    return from_error(exc)


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    title = {404: "not found", 405: "method not allowed"}.get(exc.status_code, "HTTP error")
    return problem(exc.status_code, title, str(exc.detail or ""), headers or None)


HANDLERS: dict[Any, Any] = {
    KgRagError: on_kg_rag_error,
    HTTPException: on_http_error,
}


class CatchAll:
    """ASGI middleware: an unexpected exception becomes a 500 problem (traceback to the log
    only) and is NOT re-raised, so the connection and the service stay up."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:  # noqa: BLE001 - the point of this middleware
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            if started:
                raise
            resp = problem(500, "internal error", "the service hit an unexpected error; it was "
                                                  "logged and the service is still up")
            await resp(scope, receive, send)
