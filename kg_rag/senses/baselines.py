"""Baseline selectors: the first (most frequent) sense, and a seeded random choice."""

from __future__ import annotations

import random
from collections.abc import Sequence

from kg_rag.model import Agent, Candidate, Selection, SelectionRequest

VERSION = "1"


def sense_order(cands: Sequence[Candidate]) -> list[int]:
    """Candidate positions by sense rank (unranked last, then in the given order)."""
    return sorted(range(len(cands)),
                  key=lambda i: (cands[i].rank if cands[i].rank is not None else 10**6, i))


def unresolved(agent: Agent, reason: str) -> Selection:
    return Selection(scores=(), chosen=None, confidence=0.0, agent=agent, reason=reason)


class FirstSenseSelector:
    """Chooses the candidate with the lowest ``kgr:senseRank`` (WordNet: the most frequent)."""

    agent = Agent(name="first-sense", version=VERSION)

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        out = []
        for req in requests:
            cands = req.mention.candidates
            if not cands:
                out.append(unresolved(self.agent, "no candidates"))
                continue
            order = sense_order(cands)
            n = len(cands)
            scores = {cands[i].id: (n - pos) / n for pos, i in enumerate(order)}
            out.append(Selection(
                scores=tuple(scores.items()), chosen=cands[order[0]],
                confidence=1.0 if n == 1 else 0.0, agent=self.agent,
                reason="lowest sense rank"))
        return out


class RandomSelector:
    """Chooses uniformly at random among the candidates (reproducible with ``seed``)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.agent = Agent(name="random", version=f"{VERSION}-seed{seed}")
        self._rng = random.Random(seed)

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        out = []
        for req in requests:
            cands = req.mention.candidates
            if not cands:
                out.append(unresolved(self.agent, "no candidates"))
                continue
            i = self._rng.randrange(len(cands))
            p = 1.0 / len(cands)
            out.append(Selection(
                scores=tuple((c.id, p) for c in cands), chosen=cands[i],
                confidence=1.0 if len(cands) == 1 else 0.0, agent=self.agent,
                reason="random choice"))
        return out
