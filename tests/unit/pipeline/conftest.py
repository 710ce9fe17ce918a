"""Fixtures shared by the pipeline tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store folder with the demo loaded and indexed, once per test module (tests copy it)."""
    path = tmp_path_factory.mktemp("demo") / "store"
    kg = KnowledgeGraph.open(path=str(path))
    build_demo(kg)
    kg.close()
    return path
