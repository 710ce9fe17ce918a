"""``--wsd llm,knowledge``: a primary selector, and a fall-back for what it could not decide.

Only when asked for. Mentions the primary left unresolved (e.g. an invalid LLM answer), or all of
them when the primary raised :class:`~kg_rag.errors.SelectionError` (provider down, rate
limited), go to the fall-back; every Selection the fall-back makes says so in its ``reason`` and
carries the fall-back's own agent. Configuration errors of the primary are not selection
failures and propagate: a misconfigured LLM is never silently replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from kg_rag.errors import SelectionError
from kg_rag.model import Selection, SelectionRequest
from kg_rag.senses.base import FALLBACK, SenseSelector

log = logging.getLogger(__name__)


class FallbackSelector:
    """Ask ``primary``; hand what it could not decide to ``fallback``, recording why."""

    def __init__(self, primary: SenseSelector, fallback: SenseSelector) -> None:
        self.primary = primary
        self.fallback = fallback
        self.agent = primary.agent

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        name = self.primary.agent.name
        try:
            first = self.primary.select(requests)
        except SelectionError as e:
            log.warning("%s selector failed (%s); %d mentions go to the %s selector", name, e,
                        len(requests), self.fallback.agent.name)
            return self._fall_back(requests, [f"{name} selector failed: {e}"] * len(requests))
        if len(first) != len(requests):
            raise SelectionError(f"the {name} selector answered {len(first)} of "
                                 f"{len(requests)} mentions; report this as a bug")
        open_ = [i for i, s in enumerate(first) if not s.resolved]
        if not open_:
            return first
        second = self._fall_back([requests[i] for i in open_],
                                 [f"{name} left it unresolved ({first[i].reason})" for i in open_])
        merged = list(first)
        for i, sel in zip(open_, second, strict=True):
            # the LLM was asked: its request (prompt, tokens) stays on the decision that stands
            # in for its answer, as knowledge+llm keeps it, so usage is counted and recorded
            merged[i] = replace(sel, llm=first[i].llm) if first[i].llm is not None else sel
        return merged

    def _fall_back(self, requests: Sequence[SelectionRequest], why: list[str]) -> list[Selection]:
        got = self.fallback.select(requests)
        if len(got) != len(requests):
            raise SelectionError(f"the {self.fallback.agent.name} selector answered {len(got)} "
                                 f"of {len(requests)} mentions; report this as a bug")
        return [replace(sel, reason=f"{FALLBACK}{w}; decided by {sel.agent.name}"
                        + (f" ({sel.reason})" if sel.reason else ""))
                for sel, w in zip(got, why, strict=True)]


__all__ = ["FallbackSelector"]
