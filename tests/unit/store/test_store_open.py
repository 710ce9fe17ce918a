"""open_store: arguments first, then settings (KG_RAG_ENDPOINT / KG_RAG_STORE)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.errors import StoreError
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore, RemoteStore, open_store


def test_memory_store_from_argument() -> None:
    s = open_store(":memory:", config=Settings(endpoint="http://127.0.0.1:9/query"))
    assert isinstance(s, EmbeddedStore) and s.location == ":memory:"


def test_disk_store_from_settings(tmp_path: Path) -> None:
    s = open_store(config=Settings(store=str(tmp_path / "kg")))
    assert isinstance(s, EmbeddedStore) and s.location == str(tmp_path / "kg")
    assert (tmp_path / "kg").is_dir()
    s.close()


def test_remote_store_from_settings_and_arguments() -> None:
    cfg = Settings(endpoint="http://127.0.0.1:7878/query", remote_timeout=3.0,
                   store_endpoint="http://127.0.0.1:7878/gsp")
    s = open_store(config=cfg)
    assert isinstance(s, RemoteStore)
    assert (s.endpoint, s.update_endpoint, s.store_endpoint, s.timeout) == (
        "http://127.0.0.1:7878/query", "http://127.0.0.1:7878/update", "http://127.0.0.1:7878/gsp", 3.0)
    s = open_store(endpoint="http://127.0.0.1:1/query", update_endpoint="http://127.0.0.1:1/u",
                   config=Settings())
    assert isinstance(s, RemoteStore) and s.update_endpoint == "http://127.0.0.1:1/u"


def test_bad_endpoint_argument() -> None:
    with pytest.raises(StoreError, match="http"):
        open_store(endpoint="127.0.0.1:7878", config=Settings())


def test_remote_store_works_end_to_end(oxigraph_url: str) -> None:
    s = open_store(config=Settings(endpoint=oxigraph_url))
    assert isinstance(s, RemoteStore)
    assert isinstance(s.named_graphs(), list)
