"""One chat completion through any OpenAI-compatible API, with our own bounded retries.

The official ``openai`` client (extra ``[llm]``, imported lazily) is built with an explicit
timeout and ``max_retries=0``; this module retries 429, 5xx, timeouts and connection errors
itself with exponential backoff (honouring ``Retry-After``), never beyond the caller's deadline,
and caps concurrent requests per endpoint host with a process-wide semaphore. A server that
rejects ``response_format`` (400/422) is asked again without it, and the client remembers.

The deadline is wall-clock and total: every socket operation of a request (headers and body
included, however slowly they trickle) gets at most the time left (:mod:`.transport`), and the
response is refused past ``max_response_bytes``. The answer's body is parsed here, not by the
``openai`` client: a ``200`` that is HTML, not JSON, JSON without choices or of the wrong shape
comes back as a :class:`ChatResult` with ``problem`` set (the mentions stay unresolved with that
reason), never as an exception from deep inside the client.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from kg_rag.errors import ConfigError, RateLimitedError, SelectionError
from kg_rag.senses.llm.transport import Budget, bounded, bounded_http_client

log = logging.getLogger(__name__)

DEFAULT_HOST = "api.openai.com"
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
#: the default cap of an answer's body (``KG_RAG_LLM_MAX_RESPONSE_BYTES``)
MAX_RESPONSE_BYTES = 1_000_000

_SEMAPHORES: dict[str, threading.BoundedSemaphore] = {}  # "host:port#cap" → semaphore
_SEMAPHORES_LOCK = threading.Lock()


def endpoint_host(base_url: str | None) -> str:
    """The host of the endpoint (never a path, user info or key)."""
    if not base_url:
        return DEFAULT_HOST
    return urlsplit(base_url).hostname or DEFAULT_HOST


def shared_semaphore(endpoint: str, concurrency: int) -> threading.BoundedSemaphore:
    """The process-wide cap of concurrent requests to ``endpoint`` (host[:port]) shared by all
    selectors configured with the same ``concurrency`` (keyed by both, so a cap is never sized
    by whichever selector happened to come first — e.g. an earlier server on a reused port)."""
    key = f"{endpoint}#{max(1, concurrency)}"
    with _SEMAPHORES_LOCK:
        sem = _SEMAPHORES.get(key)
        if sem is None:
            sem = _SEMAPHORES[key] = threading.BoundedSemaphore(max(1, concurrency))
        return sem


@dataclass(frozen=True, slots=True)
class ChatResult:
    content: str | None
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    latency_ms: float
    #: why the server's answer could not be read as a chat completion ("" when it could)
    problem: str = ""


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _retry_at(wait: float) -> str:
    at = datetime.now(timezone.utc) + timedelta(seconds=wait)
    return at.strftime("%Y-%m-%d %H:%M:%S UTC")


class ChatClient:
    """Chat completions against one endpoint and model."""

    def __init__(self, *, base_url: str | None, api_key: str, model: str, timeout: float,
                 retries: int, concurrency: int,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        try:
            import openai
        except ImportError as e:  # pragma: no cover - the [llm] extra is part of [all]
            raise ConfigError(
                "the LLM sense selector (--wsd llm) needs the openai client: install the 'llm' "
                "extra from the kg-rag source folder with pip install '.[llm]'"
            ) from e
        self._openai = openai
        self.host = endpoint_host(base_url)
        self.model = model
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.max_response_bytes = max(1, int(max_response_bytes))
        self.plain_json = False  # set once the server rejected response_format
        # identity: the cap counts the bytes on the wire, so a compressed bomb cannot pass it
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key,
                                     timeout=self.timeout, max_retries=0,
                                     default_headers={"Accept-Encoding": "identity"},
                                     http_client=bounded_http_client(self.timeout))
        netloc = urlsplit(base_url).netloc.rpartition("@")[2] if base_url else DEFAULT_HOST
        self._semaphore = shared_semaphore(netloc or self.host, concurrency)

    def _create(self, messages: list[dict[str, str]], response_format: dict[str, Any] | None,
                max_tokens: int, timeout: float) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": 0, "max_tokens": max_tokens, "timeout": timeout}
        if response_format is not None:
            kwargs["response_format"] = response_format
        return self._client.chat.completions.with_raw_response.create(**kwargs)

    def complete(self, messages: list[dict[str, str]], response_format: dict[str, Any],
                 max_tokens: int, deadline: float) -> ChatResult:
        """One answer, or :class:`SelectionError` / :class:`RateLimitedError`.

        ``deadline`` is a :func:`time.monotonic` instant that no wait or request goes beyond.
        """
        oa = self._openai
        failures = 0
        plain_now = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SelectionError(f"no answer from the LLM at {self.host} within the deadline; "
                                     "raise KG_RAG_LLM_DEADLINE or try again later")
            if not self._semaphore.acquire(timeout=remaining):
                raise SelectionError(f"too many concurrent LLM requests to {self.host} until the "
                                     "deadline; lower the load or raise KG_RAG_LLM_CONCURRENCY")
            fmt = None if (self.plain_json or plain_now) else response_format
            started = time.monotonic()
            wait: float | None = None
            budget = Budget(deadline, self.max_response_bytes)
            try:
                with bounded(budget):
                    raw = self._create(messages, fmt, max_tokens, min(self.timeout, remaining))
                    body = raw.http_response.content
            except oa.RateLimitError as e:
                wait = retry_after(e.response.headers)
                if wait is not None and wait > deadline - time.monotonic():
                    raise RateLimitedError(
                        f"the LLM at {self.host} is rate limiting (HTTP 429) and asks to wait "
                        f"{wait:.0f}s; retry after {_retry_at(wait)}", retry_after=wait) from None
                failure: Exception = e
            except (oa.APITimeoutError, oa.APIConnectionError) as e:
                if budget.too_large:
                    return self._too_large(started)
                if budget.refused:
                    log.warning("LLM at %s: %s; refused", self.host, budget.refused)
                    return ChatResult(None, None, 0, 0, (time.monotonic() - started) * 1000,
                                      problem=budget.refused)
                if budget.expired:
                    raise SelectionError(
                        f"no answer from the LLM at {self.host} within the deadline (the server "
                        "was too slow to send its answer); raise KG_RAG_LLM_DEADLINE or try "
                        "again later") from None
                failure = e
            except oa.APIStatusError as e:
                status = e.status_code
                if status in (400, 422) and fmt is not None:
                    log.info("LLM at %s refused the request with response_format (HTTP %s); "
                             "asking again without it", self.host, status)
                    plain_now = True
                    continue
                if status in (401, 403):
                    raise SelectionError(
                        f"the LLM at {self.host} rejected the API key (HTTP {status}); check "
                        "KG_RAG_LLM_API_KEY") from None
                if status == 404:
                    raise SelectionError(
                        f"the LLM at {self.host} has no model {self.model!r} or no chat "
                        "completions route (HTTP 404); check KG_RAG_LLM_MODEL and "
                        "KG_RAG_LLM_BASE_URL (it usually ends in /v1)") from None
                if status < 500 and status not in (408, 409):
                    raise SelectionError(
                        f"the LLM at {self.host} refused the request (HTTP {status}): "
                        f"{str(e)[:200]}") from None
                failure = e
            except oa.APIError as e:  # anything else the client raises: one line, no traceback
                raise SelectionError(f"the LLM at {self.host} answered unusably: "
                                     f"{str(e)[:200]}") from None
            else:
                latency = (time.monotonic() - started) * 1000
                if len(body) > self.max_response_bytes:
                    return self._too_large(started)
                if plain_now and not self.plain_json:
                    log.warning("LLM at %s does not take response_format; using plain JSON "
                                "instructions for this client from now on", self.host)
                    self.plain_json = True
                return parse_answer(body, raw.http_response.headers.get("content-type", ""),
                                    latency)
            finally:
                self._semaphore.release()
            failures += 1
            if failures > self.retries:
                if isinstance(failure, oa.RateLimitError):
                    raise RateLimitedError(
                        f"the LLM at {self.host} is still rate limiting after {failures} "
                        "attempts; try again in a minute", retry_after=wait) from None
                raise SelectionError(
                    f"the LLM at {self.host} failed {failures} times ({_describe(failure)}); "
                    "check the server or raise KG_RAG_LLM_RETRIES") from None
            pause = wait if wait is not None else min(
                BACKOFF_MAX, BACKOFF_BASE * 2 ** (failures - 1)) * (0.5 + random.random() / 2)
            log.info("LLM at %s: %s; retry %d/%d in %.1fs", self.host, _describe(failure),
                     failures, self.retries, pause)
            if pause >= deadline - time.monotonic():
                raise SelectionError(
                    f"the LLM at {self.host} failed ({_describe(failure)}) and the deadline left "
                    "no time to retry; raise KG_RAG_LLM_DEADLINE or try again later") from None
            time.sleep(pause)

    def _too_large(self, started: float) -> ChatResult:
        log.warning("LLM at %s sent an answer larger than %d bytes; refused", self.host,
                    self.max_response_bytes)
        return ChatResult(None, None, 0, 0, (time.monotonic() - started) * 1000,
                          problem=f"the server's answer was larger than "
                                  f"{self.max_response_bytes} bytes (KG_RAG_LLM_MAX_RESPONSE_BYTES)")


def _describe(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    return "timed out" if "Timeout" in type(e).__name__ else "connection failed"


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_answer(body: bytes, content_type: str, latency_ms: float) -> ChatResult:
    """The chat completion in ``body``, or a :class:`ChatResult` whose ``problem`` says why the
    body is not one (HTML, not JSON, no choices, a wrong shape). Never raises."""

    def bad(problem: str) -> ChatResult:
        log.warning("LLM answer unusable: %s", problem)
        return ChatResult(None, None, 0, 0, latency_ms, problem=problem)

    kind = content_type.split(";")[0].strip() or "no content type"
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        start = body[:30].decode("utf-8", "replace").strip()
        return bad(f"the server's answer is not JSON ({kind}, starts {json.dumps(start)})")
    if not isinstance(doc, dict):
        return bad(f"the server's answer is a JSON {type(doc).__name__}, not a chat completion")
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices:
        return bad("the server's answer has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return bad("the server's answer has no message in its first choice")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return bad("the server's answer has a message content that is not text")
    finish = first.get("finish_reason")
    usage = doc.get("usage")
    if not isinstance(usage, dict):
        log.warning("LLM answer carried no usage; token counts recorded as 0")
        usage = {}
    return ChatResult(content, finish if isinstance(finish, str) else None,
                      _count(usage, "prompt_tokens"), _count(usage, "completion_tokens"),
                      latency_ms)
