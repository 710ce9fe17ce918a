"""Errors as RFC 9457 (7807) problem+json: ``{type, title, status, detail}``.

Every :class:`kg_rag.errors.KgRagError` maps through its ``http_status`` and ``title``; Starlette's
HTTP errors keep their status; anything unexpected becomes a 500 problem without a traceback (the
traceback goes to the log) and the service stays up.
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


class ProblemResponse(JSONResponse):
    media_type = PROBLEM

    def render(self, content: Any) -> bytes:
        import json

        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def problem(status: int, title: str, detail: str = "", headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status}
    if detail:
        body["detail"] = detail
    body.update(extra)
    return ProblemResponse(body, status_code=status, headers=headers)


_PATH = re.compile(r"(?<![\w:/.])/(?:[^\s:;,'\"/]+/)*[^\s:;,'\"/]*")


def scrub_paths(text: str) -> str:
    """``text`` with absolute file paths replaced: store errors name the store's folder for the
    CLI, but the service never shows the paths of the machine it runs on."""
    return _PATH.sub("<path>", text)


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
