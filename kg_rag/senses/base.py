"""The sense selector interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kg_rag.model import Agent, Selection, SelectionRequest


@runtime_checkable
class SenseSelector(Protocol):
    """Chooses a sense for each ambiguous mention.

    ``select`` receives all ambiguous mentions of one text at once (an LLM selector sends them in
    one request) and returns one :class:`Selection` per request, in order. It never raises for a
    single undecidable mention: that one comes back unresolved with a ``reason``. It raises
    :class:`~kg_rag.errors.SelectionError` only when it cannot work at all (no API key, provider
    down after retries, rate limited).
    """

    agent: Agent

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]: ...


#: how the reason of a selection begins when it stands in for an answer an LLM did not give (an
#: invalid answer, twice; or the fallback selector's choice after the LLM failed or left the
#: mention open): :func:`stands_in`
LLM_INVALID = "LLM answer invalid"
FALLBACK = "fallback: "


def stands_in(sel: Selection) -> bool:
    """Whether ``sel`` stands in for an answer an LLM did not give — asking again may give it, so
    a stored decision like this is decided again rather than reused
    (:func:`kg_rag.pipeline.decide.decide`)."""
    return sel.reason.startswith((LLM_INVALID, FALLBACK))

