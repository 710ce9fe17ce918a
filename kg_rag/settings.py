"""One settings object, read once from the environment (prefix ``KG_RAG_``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path

from .errors import ConfigError


def default_store_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kg-rag" / "store"


@dataclass(frozen=True, slots=True)
class Settings:
    store: str = field(default_factory=lambda: str(default_store_path()))
    endpoint: str | None = None            # remote SPARQL query endpoint
    update_endpoint: str | None = None     # remote SPARQL update endpoint
    store_endpoint: str | None = None      # remote Graph Store Protocol endpoint
    remote_timeout: float = 30.0
    wsd: str = "knowledge"                 # knowledge | llm | none | llm,knowledge
    llm_base_url: str | None = None
    llm_api_key: str | None = field(default=None, repr=False)
    llm_model: str = "gpt-4o-mini"
    llm_timeout: float = 30.0
    llm_retries: int = 2
    llm_deadline: float = 90.0
    llm_concurrency: int = 4
    max_document_bytes: int = 5_000_000
    max_query_bytes: int = 100_000
    max_query_depth: int = 64
    query_timeout: float = 10.0
    max_rows: int = 10_000
    service_token: str | None = field(default=None, repr=False)
    allow_updates: bool = False

    def __repr__(self) -> str:  # secrets masked
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("llm_api_key", "service_token") and value:
                value = "***"
            parts.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(parts)})"

    def with_(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]


def _coerce(name: str, raw: str, default: object) -> object:
    try:
        if isinstance(default, bool):
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError:
        raise ConfigError(f"KG_RAG_{name.upper()}={raw!r} is not a valid value") from None
    return raw


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    env = os.environ if environ is None else environ
    base = Settings()
    changes: dict[str, object] = {}
    for f in fields(Settings):
        key = f"KG_RAG_{f.name.upper()}"
        if key in env:
            changes[f.name] = _coerce(f.name, env[key], getattr(base, f.name))
    if "llm_api_key" not in changes and env.get("OPENAI_API_KEY"):
        changes["llm_api_key"] = env["OPENAI_API_KEY"]
    if "llm_base_url" not in changes and env.get("OPENAI_BASE_URL"):
        changes["llm_base_url"] = env["OPENAI_BASE_URL"]
    return replace(base, **changes)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The process-wide settings, read once."""
    return load_settings()
