"""Questions that ask an LLM run in their own bounded pool: at most ``KG_RAG_LLM_CONCURRENCY``
at once, a few more waiting, and beyond that an immediate 503 with ``Retry-After`` — so a slow
or hanging model holds its own threads, never the ones every other request needs (``/health``,
label matching, the knowledge selector, documents, SPARQL). ``/health`` reports the pool."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import KgRagError

#: questions waiting for the pool, per running one, before new ones are refused
QUEUE_PER_SLOT = 2


class LlmBusy(KgRagError):
    http_status = 503
    title = "sense selection busy"
    problem_headers = {"Retry-After": "5"}


class LlmPool:
    def __init__(self, kg: KnowledgeGraph, capacity: int) -> None:
        self.kg = kg
        self.capacity = max(1, capacity)
        self.limiter = anyio.CapacityLimiter(self.capacity)
        self.in_flight = 0   # running or waiting (only touched on the event loop)

    async def run(self, selection: Any, fn: Callable[..., Any], /, *args: Any,
                  **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` in a worker thread: the LLM pool's when the sense selection
        ``selection`` (a ``wsd`` value, None for the default) asks a model, else the shared one."""
        mode = await run_in_threadpool(self.kg.mode, selection)
        if not mode.uses_llm:
            return await run_in_threadpool(fn, *args, **kwargs)
        if self.in_flight >= self.capacity * (1 + QUEUE_PER_SLOT):
            raise LlmBusy(f"{self.in_flight} questions are with the LLM or waiting for it (at most "
                          f"{self.capacity} at once, KG_RAG_LLM_CONCURRENCY); try again shortly, "
                          f"or ask with wsd knowledge")
        self.in_flight += 1
        try:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs),
                                                  limiter=self.limiter)
        finally:
            self.in_flight -= 1

    def status(self) -> dict[str, Any]:
        return {"capacity": self.capacity, "in_flight": self.in_flight,
                "saturated": self.in_flight >= self.capacity}
