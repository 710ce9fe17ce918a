"""``--wsd knowledge+llm``: the knowledge selector decides every mention; the LLM only the unsure.

The knowledge selector's scores are calibrated probabilities (``eval wsd`` measures how well:
its reliability table and risk–coverage curve). A decision whose *probability* — the chosen
candidate's share of ``Selection.scores`` — is below ``threshold`` (``KG_RAG_LLM_THRESHOLD``,
default 0.8), or that the knowledge selector left unresolved, goes to the LLM selector; all of
them of one call in one :meth:`select` of the LLM (one request for up to 16 mentions). The rest
never reach the network. ``eval wsd`` shows what each threshold costs and keeps ("at threshold
t, x % of the ambiguous mentions go to the LLM, the knowledge selector is right on y % of the
rest").

Every :class:`~kg_rag.model.Selection` carries the agent that made it (``knowledge`` or
``llm``) and a reason saying why it went where it went. When the LLM fails
(:class:`~kg_rag.errors.SelectionError`: provider down, rate limited, deadline) or answers
invalidly for a mention, the knowledge decision stands and its reason says so (an invalid
answer's trace is kept, so its tokens are counted). Configuration errors (no API key)
propagate: a misconfigured LLM is never silently skipped.

The selector's own agent, ``knowledge+llm`` with both versions and the threshold, names the
decisions (their IRIs): a decision made at another threshold or by another model is not reused
as if this selector had made it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kg_rag.errors import ConfigError, SelectionError
from kg_rag.model import Agent, Selection, SelectionRequest
from kg_rag.senses.base import SenseSelector

log = logging.getLogger(__name__)

#: the default of ``KG_RAG_LLM_THRESHOLD`` (:class:`~kg_rag.settings.Settings.llm_threshold`)
DEFAULT_THRESHOLD = 0.8


def probability(sel: Selection) -> float | None:
    """The chosen candidate's share of the selection's (non-negative) scores; None when
    unresolved, 0.0 when the scores are all zero."""
    if sel.chosen is None:
        return None
    scores = dict(sel.scores)
    total = sum(max(0.0, v) for v in scores.values())
    return max(0.0, scores.get(sel.chosen.id, 0.0)) / total if total > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Pair:
    """What the knowledge selector decided, and the decision that stands (the same one, or the
    LLM's); ``asked``: whether the mention was sent to the LLM."""

    knowledge: Selection
    final: Selection
    asked: bool


class SelectiveSelector:
    """The knowledge selector first; the LLM for decisions below ``threshold`` (see the module)."""

    def __init__(self, knowledge: SenseSelector, llm: SenseSelector, threshold: float) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"the knowledge+llm threshold must be from 0 to 1, not {threshold!r}")
        self.knowledge = knowledge
        self.llm = llm
        self.threshold = float(threshold)
        k, m = knowledge.agent, llm.agent
        self.agent = Agent(name="knowledge+llm", version=f"{k.version}+{m.version}@{threshold:g}",
                           model=m.model, endpoint_host=m.endpoint_host)

    @property
    def usage(self) -> object:
        """The LLM selector's request and token counts (:class:`~kg_rag.senses.llm.selector.Usage`)."""
        return getattr(self.llm, "usage", None)

    def warm_up(self) -> None:
        warm = getattr(self.knowledge, "warm_up", None)
        if callable(warm):
            warm()

    def unsure(self, sel: Selection, req: SelectionRequest) -> bool:
        """Whether the knowledge decision ``sel`` goes to the LLM."""
        if len({c.id for c in req.mention.candidates}) < 2:
            return False
        p = probability(sel)
        return p is None or p < self.threshold

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        return [p.final for p in self.select_pairs(requests)]

    def select_pairs(self, requests: Sequence[SelectionRequest]) -> list[Pair]:
        """Both decisions of every mention (``eval wsd`` scores the knowledge selector's too)."""
        first = self.knowledge.select(requests)
        if len(first) != len(requests):
            raise SelectionError(f"the {self.knowledge.agent.name} selector answered {len(first)} "
                                 f"of {len(requests)} mentions; report this as a bug")
        todo = {i for i, (s, r) in enumerate(zip(first, requests, strict=True)) if self.unsure(s, r)}
        t = self.threshold
        out = [Pair(s, s if i in todo or s.chosen is None or len(r.mention.candidates) < 2
                    else self._kept(s, f"probability {_p(s)} ≥ {t:g}: the LLM was not asked"), False)
               for i, (s, r) in enumerate(zip(first, requests, strict=True))]
        if not todo:
            return out
        name = self.llm.agent.name
        try:
            second = self.llm.select([requests[i] for i in sorted(todo)])
        except SelectionError as e:
            log.warning("%s selector failed (%s); the knowledge decisions of %d unsure mentions "
                        "stand", name, e, len(todo))
            for i in todo:
                out[i] = Pair(first[i], self._kept(
                    first[i], f"probability {_p(first[i])} < {t:g}, but the {name} selector "
                              f"failed ({e}): the knowledge decision stands"), True)
            return out
        if len(second) != len(todo):
            raise SelectionError(f"the {name} selector answered {len(second)} of {len(todo)} "
                                 "mentions; report this as a bug")
        for i, sel in zip(sorted(todo), second, strict=True):
            k = first[i]
            if sel.resolved:
                chose = (k.chosen.sense_key or _short(k.chosen.concept)) if k.chosen else "nothing"
                note = (f"knowledge probability {_p(k)} < {t:g} (it chose {chose}); "
                        f"decided by {name}")
                out[i] = Pair(k, replace(sel, reason=note + (f" ({sel.reason})" if sel.reason
                                                              else "")), True)
            else:
                out[i] = Pair(k, replace(self._kept(
                    k, f"probability {_p(k)} < {t:g}, but the {name} answer was unusable "
                       f"({sel.reason}): the knowledge decision stands"), llm=sel.llm), True)
        return out

    @staticmethod
    def _kept(sel: Selection, note: str) -> Selection:
        return replace(sel, reason=f"{sel.reason}; {note}" if sel.reason else note)


def _p(sel: Selection) -> str:
    p = probability(sel)
    return "none (unresolved)" if p is None else f"{p:.3f}"


def _short(iri: str) -> str:
    return iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri


__all__ = ["DEFAULT_THRESHOLD", "Pair", "SelectiveSelector", "probability"]
