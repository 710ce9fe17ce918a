"""``kg-rag serve --workers N``: N service processes over one remote store (uvicorn's process
manager starts them; each builds its app here from the environment the command set up). An
embedded store takes one process, so several workers need ``--endpoint`` (or
``KG_RAG_ENDPOINT``); each worker's caches re-check the endpoint's catalog before each question
(:meth:`kg_rag.derived.Derived.refresh`), so what one worker or indexer loads, all see."""

from __future__ import annotations

import os

from starlette.applications import Starlette

#: the command's --slots, handed to the workers
SLOTS_VARIABLE = "KG_RAG_SERVE_SLOTS"


def app_from_environment() -> Starlette:
    """The app of one worker: the store and settings named by ``KG_RAG_*`` (uvicorn factory)."""
    from kg_rag.api import KnowledgeGraph
    from kg_rag.service import create_app
    from kg_rag.settings import settings

    cfg = settings()
    return create_app(KnowledgeGraph.open(config=cfg, read_only=cfg.read_only), cfg,
                      slots=max(1, int(os.environ.get(SLOTS_VARIABLE, "4"))))
