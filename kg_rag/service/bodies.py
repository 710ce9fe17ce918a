"""Request bodies read with a size limit enforced WHILE streaming (413 without buffering it all),
JSON bodies parsed and checked in one place (:func:`parse_json`), and query strings (and form
bodies) read strictly as UTF-8 (:func:`parameters`): every route's query string is checked once
(:class:`StrictQueryString`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from kg_rag.documents.readers import load_json
from kg_rag.errors import InputError
from kg_rag.service.problems import from_error


class BodyTooLarge(InputError):
    http_status = 413
    title = "request too large"


class UnsupportedMediaType(InputError):
    http_status = 415
    title = "unsupported media type"


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or :class:`BodyTooLarge` as soon as more than ``limit`` bytes arrive."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"the request body is {declared} bytes; at most {limit} are accepted")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the request body is larger than {limit} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # lets request.form()/json() reuse it
    return body


def media_type(request: Request) -> tuple[str, dict[str, str]]:
    """The request's media type (lower case) and its parameters."""
    raw = request.headers.get("content-type", "")
    parts = [p.strip() for p in raw.split(";")]
    params: dict[str, str] = {}
    for p in parts[1:]:
        if "=" in p:
            k, _, v = p.partition("=")
            params[k.strip().lower()] = v.strip().strip('"')
    return parts[0].lower(), params


def utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"the {what} is not valid UTF-8") from None


def require_utf8_charset(params: dict[str, str]) -> None:
    charset = params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise UnsupportedMediaType(f"charset {charset} is not supported; send UTF-8")


def parse_json(raw: bytes) -> Any:
    """The JSON value of a request body, or one InputError (400): the readers' one JSON parse
    (:func:`kg_rag.documents.readers.load_json`), so a body and a JSON Lines record are refused
    for the same things (not JSON, nested too deep, a lone surrogate escape named by its field)."""
    try:
        return load_json(raw)
    except InputError as e:   # a flaw names its field; a syntax error says it is the body's
        if str(e).startswith("not valid JSON"):
            raise InputError(f"the body is {e}") from None
        raise


def query_params(request: Request) -> dict[str, str]:
    """The query string's parameters (the last value of a repeated one), decoded strictly
    (:func:`parameters`)."""
    return dict(parameters(request.scope.get("query_string", b"").decode("latin-1")))


def parameters(text: str, where: str = "query") -> list[tuple[str, str]]:
    """The ``name=value`` pairs of a query string (or of a form body, ``where="form"``), decoded
    strictly: a name or value whose percent-escapes are not UTF-8 is an InputError naming it,
    where ``request.query_params`` (and ``parse_qs``) would silently put U+FFFD in its place."""
    out: list[tuple[str, str]] = []
    for name, value in parse_qsl(text, keep_blank_values=True, errors="surrogateescape"):
        if not _utf8_clean(name):
            raise InputError(f"a {where} parameter's name is not valid UTF-8")
        if not _utf8_clean(value):
            raise InputError(f"the {where} parameter {name!r} is not valid UTF-8 "
                             f"(percent-encode the text's UTF-8 bytes)")
        out.append((name, value))
    return out


class StrictQueryString:
    """ASGI middleware: a query string that is not UTF-8 (:func:`parameters`) is one 400 problem
    on every route, before the route reads it (Starlette's ``request.query_params`` would read
    U+FFFD). ``pages``: the paths that read their parameters with :func:`query_params` and show
    this error on their own HTML page."""

    def __init__(self, app: ASGIApp, pages: Collection[str] = ()) -> None:
        self.app = app
        self.pages = frozenset(pages)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in self.pages:
            try:
                parameters(scope.get("query_string", b"").decode("latin-1"))
            except InputError as e:
                await from_error(e)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _utf8_clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
