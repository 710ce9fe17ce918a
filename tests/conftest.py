"""Shared fixtures. Tests needing ../shared/data skip with a reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kg_rag.store import EmbeddedStore
from tests.support.oxigraph_server import oxigraph_url  # noqa: F401 - session fixture: a real `oxigraph serve`
from tests.support.paths import ROOT
from tests.support.virtuoso_server import virtuoso_url  # noqa: F401 - session fixture: a real Virtuoso

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


#: the suite's folders and the marker each gives its tests (``pytest -m "not integration"`` runs
#: the unit tests alone in about a minute)
_FOLDER_MARKERS = {"integration": "integration", "conformance": "conformance", "packaging": "packaging"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        rel = Path(str(item.path)).resolve().relative_to(tests)
        marker = _FOLDER_MARKERS.get(rel.parts[0])
        if marker:
            item.add_marker(getattr(pytest.mark, marker))
