"""A real OpenAI-compatible chat server on 127.0.0.1 for tests (stdlib ``http.server``).

It speaks ``POST /v1/chat/completions`` (answers with ``usage`` token counts, each also kept in
``server.usages``), records every request (``server.requests``: path, headers, JSON body) and
answers as scripted by the test::

    with LlmServer(choose({"הבדים": "branch"})) as srv:          # pick by sense text
        selector = selector_for(srv)                            # the real openai client
        ...
    with LlmServer([Reply(status=429, headers={"Retry-After": "1"}), answer(("M1", "S2"))]):

A script is a callable ``body -> Reply`` or a list of them / of :class:`Reply` used in order
(the last one repeats). ``rejects_response_format=True`` answers 400 to any request that has a
``response_format``, like servers without structured output.

Hostile behaviours, per :class:`Reply`: ``delay`` (seconds before the headers),
``header_trickle`` / ``trickle`` (seconds between single bytes of the status line and headers /
of the body), ``pad`` (bytes of padding added to the JSON body: a huge answer), ``chunked``
(no ``Content-Length``: chunked transfer, so the size is known only by reading), ``gzip`` (a
compressed body, e.g. a small bomb), ``raw`` with
``content_type`` (an HTML page, garbage). ``server.bytes_sent`` counts the body bytes written.
"""

from __future__ import annotations

import gzip
import http
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_rag.senses.llm.selector import LLMSenseSelector

Script = Callable[[dict[str, Any]], "Reply"]
KEY = "sk-test-secret-key-123"


@dataclass
class Reply:
    status: int = 200
    content: str | None = '{"answers": []}'
    finish_reason: str = "stop"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None          # a whole body of its own (for error pages)
    usage: bool = True
    content_type: str = "application/json"
    header_trickle: float = 0.0     # seconds between bytes of the status line and headers
    trickle: float = 0.0            # seconds between bytes of the body
    pad: int = 0                    # bytes of padding in the JSON body
    chunked: bool = False           # chunked transfer instead of Content-Length
    gzip: bool = False              # the body gzip-compressed (Content-Encoding: gzip)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def user(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "user")

    @property
    def system(self) -> str:
        return next(m["content"] for m in self.body["messages"] if m["role"] == "system")


def answer(*items: tuple[str, str] | dict[str, Any], confidence: float = 0.9,
           finish_reason: str = "stop") -> Reply:
    """A reply with ``{"answers": [...]}``; items as ``("M1", "S2")`` or whole dicts."""
    answers = [i if isinstance(i, dict) else
               {"mention": i[0], "sense": i[1], "confidence": confidence,
                "rationale": f"{i[1]} fits the context."} for i in items]
    return Reply(content=json.dumps({"answers": answers}, ensure_ascii=False),
                 finish_reason=finish_reason)


_MENTION = re.compile(r'^(M\d+) ("(?:[^"\\]|\\.)*")', re.MULTILINE)
_SENSE = re.compile(r"^(S\d+)\b")


def mention_blocks(user: str) -> dict[str, tuple[str, list[str]]]:
    """From a wsd prompt: mention id → (surface text, sense lines)."""
    blocks: dict[str, tuple[str, list[str]]] = {}
    for chunk in user.split("\n\n"):
        lines = chunk.strip().splitlines()
        for n, line in enumerate(lines):
            m = _MENTION.match(line)
            if m:
                senses = [x for x in lines[n + 1:] if _SENSE.match(x)]
                blocks[m.group(1)] = (json.loads(m.group(2)), senses)
                break
    return blocks


def choose(needles: dict[str, str], confidence: float = 0.9) -> Script:
    """Answer each mention with the first sense whose line contains the needle given for its
    surface text (or its mention id); S1 when no needle is given."""

    def script(body: dict[str, Any]) -> Reply:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        items: list[tuple[str, str]] = []
        for mid, (surface, senses) in mention_blocks(user).items():
            needle = needles.get(surface, needles.get(mid))
            pick = "S1"
            for line in senses:
                if needle is not None and needle in line:
                    pick = _SENSE.match(line).group(1)  # type: ignore[union-attr]
                    break
            items.append((mid, pick))
        return answer(*items, confidence=confidence)

    return script


class LlmServer:
    """The loopback server; a context manager (``url`` ends in ``/v1``)."""

    def __init__(self, script: Script | Reply | list[Script | Reply] | None = None, *,
                 rejects_response_format: bool = False) -> None:
        self.script = script
        self.rejects_response_format = rejects_response_format
        self.requests: list[Recorded] = []
        #: the ``usage`` objects of the answers sent, in order (what a client should count)
        self.usages: list[dict[str, int]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next(self, body: dict[str, Any]) -> Reply:
        script = self.script
        if isinstance(script, list):
            n = len(self.chat_requests) - 1
            script = script[min(n, len(script) - 1)]
        if script is None:
            return Reply(status=500, raw='{"error": {"message": "no script"}}')
        return script if isinstance(script, Reply) else script(body)

    def __enter__(self) -> LlmServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                with server._lock:
                    server.requests.append(Recorded(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    if not self.path.endswith("/chat/completions"):
                        reply = Reply(status=404, raw='{"error": {"message": "not found"}}')
                    elif server.rejects_response_format and "response_format" in body:
                        reply = Reply(status=400, raw=json.dumps({"error": {
                            "message": "response_format is not supported", "type":
                            "invalid_request_error", "param": "response_format"}}))
                    else:
                        reply = server._next(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if reply.delay:
                        time.sleep(reply.delay)
                    self._send(reply, body)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _send(self, reply: Reply, body: dict[str, Any]) -> None:
                if reply.raw is not None:
                    payload = reply.raw
                elif reply.status != 200:
                    payload = json.dumps({"error": {"message": f"scripted {reply.status}",
                                                    "type": "server_error"}})
                else:
                    prompt_chars = sum(len(m.get("content") or "")
                                       for m in body.get("messages", []))
                    doc: dict[str, Any] = {
                        "id": f"chatcmpl-test{len(server.requests)}",
                        "object": "chat.completion", "created": int(time.time()),
                        "model": body.get("model", "test-model"),
                        "choices": [{"index": 0, "finish_reason": reply.finish_reason,
                                     "message": {"role": "assistant",
                                                 "content": reply.content}}],
                    }
                    if reply.usage:
                        out = len(reply.content or "") // 4 + 1
                        doc["usage"] = {"prompt_tokens": prompt_chars // 3 + 1,
                                        "completion_tokens": out,
                                        "total_tokens": prompt_chars // 3 + 1 + out}
                        with server._lock:
                            server.usages.append(doc["usage"])
                    if reply.pad:
                        doc["padding"] = "x" * reply.pad
                    payload = json.dumps(doc, ensure_ascii=False)
                data = payload.encode("utf-8")
                if reply.gzip:
                    data = gzip.compress(data)
                    reply = replace(reply, headers={**reply.headers,
                                                    "Content-Encoding": "gzip"})
                head = [f"HTTP/1.1 {reply.status} {http.HTTPStatus(reply.status).phrase}",
                        f"Content-Type: {reply.content_type}"]
                head.append("Transfer-Encoding: chunked" if reply.chunked
                            else f"Content-Length: {len(data)}")
                head += [f"{k}: {v}" for k, v in reply.headers.items()]
                header = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
                try:
                    self._write(header, reply.header_trickle, count=False)
                    if reply.chunked:
                        step = 64 * 1024
                        for i in range(0, len(data), step):
                            part = data[i:i + step]
                            self._write(b"%x\r\n" % len(part), 0.0, count=False)
                            self._write(part, reply.trickle)
                            self._write(b"\r\n", 0.0, count=False)
                        self._write(b"0\r\n\r\n", 0.0, count=False)
                    else:
                        self._write(data, reply.trickle)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (timeout tests)

            def _write(self, data: bytes, trickle: float, *, count: bool = True) -> None:
                if not trickle:
                    for i in range(0, len(data), 64 * 1024):
                        part = data[i:i + 64 * 1024]
                        self.wfile.write(part)
                        if count:
                            with server._lock:
                                server.bytes_sent += len(part)
                    return
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    if count:
                        with server._lock:
                            server.bytes_sent += 1
                    time.sleep(trickle)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()


def serve(script: Script | Reply | list[Script | Reply] | None = None,
          **kw: Any) -> Iterator[LlmServer]:
    """Generator form for pytest fixtures: ``yield from serve(...)``."""
    with LlmServer(script, **kw) as srv:
        yield srv


def llm_env(srv: LlmServer, **extra: str) -> dict[str, str]:
    """Environment variables pointing kg-rag at ``srv`` (for CLI and API tests)."""
    return {"KG_RAG_LLM_BASE_URL": srv.url, "KG_RAG_LLM_API_KEY": KEY,
            "KG_RAG_LLM_MODEL": "test-model", "KG_RAG_LLM_TIMEOUT": "5", **extra}


def selector_for(srv: LlmServer, **kw: object) -> LLMSenseSelector:
    """An LLMSenseSelector (real openai client) talking to ``srv``; ``kw`` override settings."""
    from kg_rag.senses.llm.selector import LLMSenseSelector
    from kg_rag.settings import Settings

    base = Settings(llm_base_url=srv.url, llm_api_key=KEY, llm_model="test-model",
                    llm_timeout=5.0, llm_retries=2, llm_deadline=20.0)
    return LLMSenseSelector.from_settings(base.with_(**kw))
