"""Shared fixtures. Tests needing ../shared/data skip with a reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from oxigraph_server import oxigraph_url  # noqa: F401 - session fixture: a real `oxigraph serve`

from kg_rag.store import EmbeddedStore

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("KG_RAG_SHARED", ROOT.parent / "shared")) / "data"


@pytest.fixture
def mem_store() -> EmbeddedStore:
    """A fresh in-memory Oxigraph store."""
    return EmbeddedStore(":memory:")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real data of ../shared/data; skips the test when it is not there."""
    if not SHARED.is_dir():
        pytest.skip(f"needs the shared data folder {SHARED} (absent on a fresh clone)")
    return SHARED
