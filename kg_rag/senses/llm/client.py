"""One chat completion through any OpenAI-compatible API, with our own bounded retries.

The official ``openai`` client (extra ``[llm]``, imported lazily) is built with an explicit
timeout and ``max_retries=0``; this module retries 429, 5xx, timeouts and connection errors
itself with exponential backoff (honouring ``Retry-After``), never beyond the caller's deadline,
and caps concurrent requests per endpoint host with a process-wide semaphore. A server that
rejects ``response_format`` (400/422) is asked again without it, and the client remembers.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from kg_rag.errors import ConfigError, RateLimitedError, SelectionError

log = logging.getLogger(__name__)

DEFAULT_HOST = "api.openai.com"
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0

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
                 retries: int, concurrency: int) -> None:
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
        self.plain_json = False  # set once the server rejected response_format
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key,
                                     timeout=self.timeout, max_retries=0)
        netloc = urlsplit(base_url).netloc.rpartition("@")[2] if base_url else DEFAULT_HOST
        self._semaphore = shared_semaphore(netloc or self.host, concurrency)

    def _create(self, messages: list[dict[str, str]], response_format: dict[str, Any] | None,
                max_tokens: int, timeout: float) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": 0, "max_tokens": max_tokens, "timeout": timeout}
        if response_format is not None:
            kwargs["response_format"] = response_format
        return self._client.chat.completions.create(**kwargs)

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
            try:
                resp = self._create(messages, fmt, max_tokens, min(self.timeout, remaining))
            except oa.RateLimitError as e:
                wait = retry_after(e.response.headers)
                if wait is not None and wait > deadline - time.monotonic():
                    raise RateLimitedError(
                        f"the LLM at {self.host} is rate limiting (HTTP 429) and asks to wait "
                        f"{wait:.0f}s; retry after {_retry_at(wait)}", retry_after=wait) from None
                failure: Exception = e
            except oa.APITimeoutError as e:
                failure = e
            except oa.APIConnectionError as e:
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
            else:
                latency = (time.monotonic() - started) * 1000
                if plain_now and not self.plain_json:
                    log.warning("LLM at %s does not take response_format; using plain JSON "
                                "instructions for this client from now on", self.host)
                    self.plain_json = True
                return _result(resp, latency)
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


def _describe(e: Exception) -> str:
    status = getattr(e, "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    return "timed out" if "Timeout" in type(e).__name__ else "connection failed"


def _result(resp: Any, latency_ms: float) -> ChatResult:
    choices = getattr(resp, "choices", None) or []
    content = finish = None
    if choices:
        first = choices[0]
        finish = getattr(first, "finish_reason", None)
        message = getattr(first, "message", None)
        content = getattr(message, "content", None) if message is not None else None
    usage = getattr(resp, "usage", None)
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
    if usage is None:
        log.warning("LLM answer carried no usage; token counts recorded as 0")
    return ChatResult(content if isinstance(content, str) else None,
                      finish if isinstance(finish, str) else None,
                      tokens_in, tokens_out, latency_ms)
