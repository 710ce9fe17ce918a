"""Settings: KG_RAG_ environment parsing, bad values, secrets never shown."""

from __future__ import annotations

import logging

import pytest

from kg_rag.errors import ConfigError
from kg_rag.settings import Settings, load_settings, settings


def test_defaults_without_environment() -> None:
    s = load_settings({})
    assert s == Settings()
    assert s.endpoint is None and s.llm_api_key is None and s.allow_updates is False
    assert s.store.endswith("kg-rag/store")


def test_every_field_is_read_with_its_type() -> None:
    s = load_settings({
        "KG_RAG_STORE": ":memory:", "KG_RAG_ENDPOINT": "http://127.0.0.1:7878/query",
        "KG_RAG_REMOTE_TIMEOUT": "2.5", "KG_RAG_LLM_RETRIES": "0", "KG_RAG_LLM_CONCURRENCY": " 8 ",
        "KG_RAG_ALLOW_UPDATES": "Yes", "KG_RAG_WSD": "llm,knowledge", "KG_RAG_MAX_ROWS": "5",
        "UNRELATED": "x",
    })
    assert s.store == ":memory:" and s.endpoint == "http://127.0.0.1:7878/query"
    assert s.remote_timeout == 2.5 and isinstance(s.remote_timeout, float)
    assert s.llm_retries == 0 and s.llm_concurrency == 8 and isinstance(s.max_rows, int)
    assert s.allow_updates is True and s.wsd == "llm,knowledge" and s.max_rows == 5


@pytest.mark.parametrize("raw,expected", [("1", True), ("true", True), ("ON", True),
                                          ("0", False), ("no", False), ("off", False), ("", False)])
def test_booleans(raw: str, expected: bool) -> None:
    assert load_settings({"KG_RAG_ALLOW_UPDATES": raw}).allow_updates is expected


@pytest.mark.parametrize("key,raw", [
    ("KG_RAG_ALLOW_UPDATES", "maybe"),
    ("KG_RAG_REMOTE_TIMEOUT", "soon"),
    ("KG_RAG_REMOTE_TIMEOUT", "0"),
    ("KG_RAG_REMOTE_TIMEOUT", "-1"),
    ("KG_RAG_REMOTE_TIMEOUT", "nan"),
    ("KG_RAG_LLM_TIMEOUT", "inf"),
    ("KG_RAG_LLM_RETRIES", "-1"),
    ("KG_RAG_LLM_RETRIES", "1.5"),
    ("KG_RAG_LLM_CONCURRENCY", "0"),
    ("KG_RAG_MAX_ROWS", "lots"),
    ("KG_RAG_ENDPOINT", "localhost:7878/query"),
    ("KG_RAG_ENDPOINT", "file:///etc/passwd"),
    ("KG_RAG_LLM_BASE_URL", "ftp://example.org"),
    ("KG_RAG_LLM_BASE_URL", "http://[::1/v1"),          # urlsplit's ValueError, not a traceback
    ("KG_RAG_ENDPOINT", "http://[::1/sparql"),
    ("KG_RAG_ENDPOINT", "http://h:99999/q"),
    ("KG_RAG_STORE", ""),
    ("KG_RAG_WSD", "  "),
])
def test_bad_values_are_config_errors(key: str, raw: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_settings({key: raw})
    msg = str(e.value)
    assert key in msg and "\n" not in msg
    assert "use" in msg      # says what to do


@pytest.mark.parametrize("raw", ["ключ", "a b", "a\nb"])
def test_a_secret_that_cannot_go_into_a_header_is_a_config_error(raw: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_settings({"KG_RAG_LLM_API_KEY": raw})
    assert "printable ASCII" in str(e.value) and raw not in str(e.value)


def test_empty_optional_value_means_unset() -> None:
    s = load_settings({"KG_RAG_ENDPOINT": "", "KG_RAG_LLM_API_KEY": " "})
    assert s.endpoint is None and s.llm_api_key is None


def test_openai_variables_are_fallbacks() -> None:
    s = load_settings({"OPENAI_API_KEY": "sk-openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert s.llm_api_key == "sk-openai" and s.llm_base_url == "http://127.0.0.1:9/v1"
    s = load_settings({"OPENAI_API_KEY": "sk-openai", "KG_RAG_LLM_API_KEY": "sk-kgrag"})
    assert s.llm_api_key == "sk-kgrag"
    with pytest.raises(ConfigError, match="KG_RAG_LLM_BASE_URL"):
        load_settings({"OPENAI_BASE_URL": "not a url"})


def test_secrets_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    secret, token = "sk-SECRET-0123456789", "tok-SECRET-987"
    s = load_settings({"KG_RAG_LLM_API_KEY": secret, "KG_RAG_SERVICE_TOKEN": token})
    assert s.llm_api_key == secret and s.service_token == token
    for text in (repr(s), str(s), f"{s}", repr([s])):
        assert secret not in text and token not in text
        assert "llm_api_key='***'" in text and "service_token='***'" in text
    with caplog.at_level(logging.INFO):
        logging.getLogger("kg_rag.test").info("settings: %s", s)
        logging.getLogger("kg_rag.test").info("settings: %r", s)
    assert secret not in caplog.text and "***" in caplog.text
    # unset secrets are shown as None, not as a mask
    assert "llm_api_key=None" in repr(Settings())


def test_secret_value_is_never_echoed_in_errors() -> None:
    # a URL may carry credentials: the value is not repeated
    with pytest.raises(ConfigError) as e:
        load_settings({"KG_RAG_LLM_BASE_URL": "user:SECRETPW@host"})
    assert "SECRETPW" not in str(e.value)


def test_with_and_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings().with_(max_rows=3)
    assert s.max_rows == 3 and Settings().max_rows != 3
    with pytest.raises(AttributeError):
        s.max_rows = 4  # type: ignore[misc]
    settings.cache_clear()
    monkeypatch.setenv("KG_RAG_MAX_ROWS", "7")
    first = settings()
    monkeypatch.setenv("KG_RAG_MAX_ROWS", "9")
    assert settings() is first and first.max_rows == 7      # read once
    settings.cache_clear()
