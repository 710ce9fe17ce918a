"""Request bodies read with a size limit enforced WHILE streaming (413 without buffering it all),
JSON bodies parsed and checked in one place (:func:`parse_json`), and query strings read strictly
as UTF-8 (:func:`query_params`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request

from kg_rag.documents.readers import load_json
from kg_rag.errors import InputError


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
    """The query string's parameters (the last value of a repeated one), decoded strictly: a
    name or value whose percent-escapes are not UTF-8 is an InputError naming it, where
    ``request.query_params`` would silently put U+FFFD in its place."""
    raw = request.scope.get("query_string", b"").decode("latin-1")
    out: dict[str, str] = {}
    for name, value in parse_qsl(raw, keep_blank_values=True, errors="surrogateescape"):
        if not _utf8_clean(name):
            raise InputError("a query parameter's name is not valid UTF-8")
        if not _utf8_clean(value):
            raise InputError(f"the query parameter {name!r} is not valid UTF-8 "
                             f"(percent-encode the text's UTF-8 bytes)")
        out[name] = value
    return out


def _utf8_clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
