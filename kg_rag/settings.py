"""One settings object, read once from the environment (prefix ``KG_RAG_``)."""

from __future__ import annotations

import math
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path

from kg_rag.errors import ConfigError, InputError
from kg_rag.senses.mode import WsdMode


def default_store_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kg-rag" / "store"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kg-rag"


@dataclass(frozen=True, slots=True)
class Settings:
    store: str = field(default_factory=lambda: str(default_store_path()))
    #: derived data kept between processes (the knowledge selector's knowledge base)
    cache_dir: str = field(default_factory=lambda: str(default_cache_dir()))
    endpoint: str | None = None            # remote SPARQL query endpoint
    update_endpoint: str | None = None     # remote SPARQL update endpoint
    store_endpoint: str | None = None      # remote Graph Store Protocol endpoint
    #: the remote engine's SPARQL dialect: auto (from its Server header), standard or virtuoso
    endpoint_dialect: str = "auto"
    remote_timeout: float = 30.0
    wsd: WsdMode = WsdMode.KNOWLEDGE       # the default sense selection mode (WsdMode)
    llm_base_url: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    llm_model: str = "gpt-4o-mini"
    llm_timeout: float = 30.0
    llm_retries: int = 2
    #: seconds for one LLM request, retries, backoff and a slowly sent body included
    llm_deadline: float = 20.0
    llm_concurrency: int = 4
    #: an LLM answer's body larger than this is refused (the mentions stay unresolved)
    llm_max_response_bytes: int = 1_000_000
    #: knowledge+llm: knowledge decisions with a probability below this go to the LLM
    llm_threshold: float = 0.8
    #: the LLM's prompt template: wsd-v1 (compact) or wsd-rich-v1 (kg_rag/senses/llm/rich.py)
    llm_prompt: str = "wsd-v1"
    #: the knowledge selector's contextual signal for English (a small English encoder run on
    #: the CPU, when installed: kg_rag/senses/knowledge/contextual.py); off: faster, less accurate
    context_encoder: bool = True
    max_document_bytes: int = 5_000_000
    #: a mention keeps at most this many readings — those of lowest sense rank — cut before any
    #: evidence is fetched or a selector runs (a safety limit, not a tuning: the largest real ones
    #: here are WOLF's "donner" with 103 senses and Open English WordNet's "break" with 75)
    max_candidates: int = 250
    #: loading a vocabulary file (``kg-rag load``): its size once decompressed (a gzip bomb is
    #: refused as it expands), and for XML read as it streams (WN-LMF, DMLex) the number of
    #: elements, the characters of one text or attribute value, and the nesting depth
    load_max_bytes: int = 1_000_000_000
    load_max_elements: int = 10_000_000
    load_max_text: int = 100_000
    load_max_depth: int = 100
    max_query_bytes: int = 100_000
    max_query_depth: int = 64
    #: estimated syntax-tree depth (operator chains, patterns of a group; see kg_rag.store.guard)
    max_query_chain: int = 1_000
    query_timeout: float = 10.0
    #: children forked ahead of time for the public /sparql queries (the deadline and limits
    #: stay; a write retires those forked before it; kg_rag/service/pool.py); 0: a fresh child
    #: for every query
    query_pool: int = 2
    max_rows: int = 10_000
    service_token: str | None = field(default=None, repr=False)
    allow_updates: bool = False
    #: the service writes nothing at all (``kg-rag serve --read-only``)
    read_only: bool = False
    #: the service records the questions of POST /ask and /annotate (off: anyone could grow the
    #: store); when on, only the last ``service_record_max`` questions of at most
    #: ``service_record_ttl`` seconds are kept, with the decisions only they use
    service_record: bool = False
    service_record_max: int = 1_000
    service_record_ttl: float = 86_400.0
    service_record_max_chars: int = 500_000
    #: seconds a connection may take to send a request's headers, and may stay idle between
    #: requests, before the service closes it (slow or idle clients cannot hold sockets)
    service_header_timeout: float = 10.0
    #: connections the service holds at once (also kept below the process's open-file limit);
    #: requests beyond it are answered 503 at once
    service_max_connections: int = 1_000
    #: requests a second each client address may send on average (0: no limit), and its bursts;
    #: beyond them the service answers 429 with Retry-After (see kg_rag/service/ratelimit.py)
    service_rate: float = 50.0
    service_burst: int = 100
    #: addresses or networks never limited (comma-separated; ``none`` for no exemption): by
    #: default loopback, where the CLI works through the service
    service_rate_exempt: str = "127.0.0.1,::1"
    #: proxies whose X-Forwarded-For names the client (comma-separated addresses or networks);
    #: none by default: the header is then ignored
    service_trusted_proxies: str | None = None

    def __repr__(self) -> str:  # secrets masked
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _SECRETS and value:
                value = "***"
            parts.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(parts)})"

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


_SECRETS = ("llm_api_key", "service_token")
_URLS = ("endpoint", "update_endpoint", "store_endpoint", "llm_base_url")
_MAY_BE_ZERO = ("llm_retries", "llm_threshold", "service_rate", "query_pool")
_AT_MOST_ONE = ("llm_threshold",)


def header_safe(value: str) -> bool:
    """Whether a key or token can go into an HTTP header as it is: printable ASCII, no spaces."""
    return all(" " < c < "\x7f" for c in value)


def _coerce(name: str, raw: str, default: object) -> object:
    """The value of ``KG_RAG_<NAME>`` as the field's type; ConfigError saying what is expected."""
    key = f"KG_RAG_{name.upper()}"
    raw = raw.strip()
    shown = "***" if name in _SECRETS else repr(raw)
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{key}={shown} is not a valid value; use true or false")
    if isinstance(default, int | float):
        kind = "a whole number" if isinstance(default, int) else "a number"
        try:
            value: int | float = int(raw) if isinstance(default, int) else float(raw)
        except ValueError:
            raise ConfigError(f"{key}={shown} is not a valid value; use {kind}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and name not in _MAY_BE_ZERO):
            least = "0 or more" if name in _MAY_BE_ZERO else "more than 0"
            raise ConfigError(f"{key}={shown} is not a valid value; use {kind}, {least}")
        if name in _AT_MOST_ONE and value > 1:
            raise ConfigError(f"{key}={shown} is not a valid value; use a number from 0 to 1")
        return value
    if raw == "":
        if default is None:
            return None
        shown_default = default.value if isinstance(default, WsdMode) else default
        raise ConfigError(f"{key} is empty; unset it to use the default {shown_default!r} or give a value")
    if isinstance(default, WsdMode):
        try:
            return WsdMode.parse(raw)
        except InputError:
            raise ConfigError(f"{key}={shown} is not a valid value; use one of "
                              f"{WsdMode.names()}") from None
    if name in _URLS:
        example = ("http://127.0.0.1:8000/v1" if name == "llm_base_url" else
                   "http://127.0.0.1:7878/query")
        try:
            parts = urllib.parse.urlsplit(raw)
            _ = parts.port   # raises ValueError for a port that is no number or out of range
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        except ValueError:   # "http://[::1/v1": an unclosed IPv6 bracket, a bad port
            ok = False
        if not ok:
            # the value is not shown: a URL may carry credentials
            raise ConfigError(f"{key} is not a valid value; use an http(s) URL such as {example}")
    if name in _SECRETS and not header_safe(raw):
        # a key or token goes into an HTTP header: printable ASCII only (not shown: a secret)
        raise ConfigError(f"{key} is not a valid value; a key or token is printable ASCII "
                          f"with no spaces")
    return raw


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``environ`` (default: the process environment). Bad values: ConfigError."""
    env = os.environ if environ is None else environ
    base = Settings()
    raw: dict[str, str] = {}
    if env.get("OPENAI_API_KEY"):
        raw["llm_api_key"] = env["OPENAI_API_KEY"]
    if env.get("OPENAI_BASE_URL"):
        raw["llm_base_url"] = env["OPENAI_BASE_URL"]
    for f in fields(Settings):
        key = f"KG_RAG_{f.name.upper()}"
        if key in env:
            raw[f.name] = env[key]   # KG_RAG_ wins over the OpenAI variables
    changes = {name: _coerce(name, value, getattr(base, name)) for name, value in raw.items()}
    return replace(base, **changes)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()
