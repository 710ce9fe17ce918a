"""Is a mode's gain over another more than noise? Paired per-query differences and a two-sided
paired randomization (sign-flip) test, as information-retrieval evaluations report them
(Smucker, Allan & Carterette 2007: the randomization test is the one to use for IR metrics).

Under the null hypothesis the two systems are exchangeable on every query, so each per-query
difference is as likely negated; the p-value is the share of random sign assignments whose mean
difference is at least as far from 0 as the observed one. Seeded: the same runs give the same p.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: random sign assignments (p resolution about 1e-4; exact enumeration below ``EXACT`` differences)
ROUNDS = 20_000
EXACT = 16
SEED = 20071


@dataclass(frozen=True, slots=True)
class Paired:
    """One metric of mode A against mode B over the same queries."""

    delta: float   # mean(A) - mean(B)
    wins: int      # queries where A > B
    losses: int    # queries where A < B
    p: float       # two-sided paired randomization test

    def as_dict(self) -> dict[str, float | int]:
        return {"delta": round(self.delta, 4), "wins": self.wins, "losses": self.losses,
                "p": round(self.p, 4)}

    def describe(self) -> str:
        return f"{self.delta:+.3f} ({self.wins} better, {self.losses} worse, p = {self.p:.3g})"


def randomization_p(diffs: Sequence[float], rounds: int = ROUNDS, seed: int = SEED) -> float:
    """Two-sided p-value of the mean of paired differences under random sign flips."""
    d = np.asarray([x for x in diffs if x != 0.0], dtype=np.float64)
    if d.size == 0:
        return 1.0
    observed = abs(d.sum()) - 1e-12
    if d.size <= EXACT:
        signs = ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
        return float(np.mean(np.abs(signs @ d) >= observed))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, rounds, 5_000):
        n = min(5_000, rounds - start)
        signs = rng.integers(0, 2, size=(n, d.size)) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed))
    return (hits + 1) / (rounds + 1)


def paired(a: Mapping[str, float], b: Mapping[str, float]) -> Paired:
    """Mode A's per-query values against mode B's (the queries both have)."""
    qs = sorted(a.keys() & b.keys())
    diffs = [a[q] - b[q] for q in qs]
    return Paired(delta=sum(diffs) / len(diffs) if diffs else 0.0,
                  wins=sum(1 for x in diffs if x > 0), losses=sum(1 for x in diffs if x < 0),
                  p=randomization_p(diffs))
