"""Is a mode's gain over another more than noise? Paired per-query differences and a two-sided
paired randomization (sign-flip) test, as information-retrieval evaluations report them
(Smucker, Allan & Carterette 2007: the randomization test is the one to use for IR metrics).

Under the null hypothesis the two systems are exchangeable on every query, so each per-query
difference is as likely negated; the p-value is the share of random sign assignments whose mean
difference is at least as far from 0 as the observed one. Beside it, a 95 % confidence interval
of the mean difference from a paired bootstrap over the queries (percentile method, Efron &
Tibshirani 1993): how large the gain could be, not only whether it is noise. Seeded: the same
runs give the same p and the same interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: random sign assignments (p resolution about 1e-4; exact enumeration below ``EXACT`` differences)
ROUNDS = 20_000
#: bootstrap resamples of the queries for the confidence interval
BOOTSTRAP = 10_000
EXACT = 16
SEED = 20071


@dataclass(frozen=True, slots=True)
class Paired:
    """One metric of mode A against mode B over the same queries."""

    delta: float   # mean(A) - mean(B)
    wins: int      # queries where A > B
    losses: int    # queries where A < B
    p: float       # two-sided paired randomization test
    low: float = 0.0   # 95 % paired-bootstrap confidence interval of ``delta``
    high: float = 0.0

    def as_dict(self) -> dict[str, float | int | list[float]]:
        return {"delta": round(self.delta, 4), "wins": self.wins, "losses": self.losses,
                "p": round(self.p, 4), "ci95": [round(self.low, 4), round(self.high, 4)]}

    def describe(self) -> str:
        return (f"{self.delta:+.3f} [95 % CI {self.low:+.3f}, {self.high:+.3f}] "
                f"({self.wins} better, {self.losses} worse, p = {self.p:.3g})")


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


def bootstrap_ci(diffs: Sequence[float], rounds: int = BOOTSTRAP, seed: int = SEED,
                 level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the mean paired difference over queries resampled with replacement
    (ties included: a query where both modes score the same is part of the mean)."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.size == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = np.empty(rounds, dtype=np.float64)
    for start in range(0, rounds, 2_000):
        n = min(2_000, rounds - start)
        means[start : start + n] = d[rng.integers(0, d.size, size=(n, d.size))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return (float(lo), float(hi))


def paired(a: Mapping[str, float], b: Mapping[str, float]) -> Paired:
    """Mode A's per-query values against mode B's (the queries both have)."""
    qs = sorted(a.keys() & b.keys())
    diffs = [a[q] - b[q] for q in qs]
    low, high = bootstrap_ci(diffs)
    return Paired(delta=sum(diffs) / len(diffs) if diffs else 0.0,
                  wins=sum(1 for x in diffs if x > 0), losses=sum(1 for x in diffs if x < 0),
                  p=randomization_p(diffs), low=low, high=high)
