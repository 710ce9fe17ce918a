"""Request bodies read with a size limit enforced WHILE streaming (413 without buffering it all)."""

from __future__ import annotations

from starlette.requests import Request

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
