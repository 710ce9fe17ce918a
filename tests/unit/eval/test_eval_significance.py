"""The paired randomization test behind ``eval retrieval``'s "vs none" lines."""

from __future__ import annotations

import itertools

import pytest

from kg_rag.eval.significance import EXACT, paired, randomization_p


def brute_force(diffs: list[float]) -> float:
    observed = abs(sum(diffs))
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    return sum(1 for s in flips if abs(sum(a * b for a, b in zip(s, diffs, strict=True))) >= observed - 1e-12) / len(flips)


@pytest.mark.parametrize("diffs", [[1.0] * 10, [0.5, -0.25, 1.0, 0.0, 0.75], [0.3, -0.3], [1.0, 1.0, -1.0, 0.2]])
def test_exact_p_equals_enumeration(diffs: list[float]) -> None:
    assert randomization_p(diffs) == pytest.approx(brute_force([d for d in diffs if d]))


def test_ten_wins_of_ten_is_two_in_1024() -> None:
    assert randomization_p([1.0] * 10) == pytest.approx(2 / 1024)


def test_sampled_p_close_to_exact_and_seeded() -> None:
    diffs = [1.0] * 14 + [-1.0] * 4 + [0.5, 0.25]   # 20 > EXACT: sampled
    assert len(diffs) > EXACT
    exact = brute_force(diffs)
    p = randomization_p(diffs)
    assert p == pytest.approx(exact, abs=0.005)
    assert randomization_p(diffs) == p


def test_no_difference_is_p_one_and_paired_counts() -> None:
    assert randomization_p([0.0, 0.0]) == 1.0
    assert randomization_p([]) == 1.0
    c = paired({"a": 1.0, "b": 0.5, "c": 0.2, "x": 9.0}, {"a": 0.0, "b": 0.5, "c": 0.4})
    assert (c.wins, c.losses) == (1, 1)
    assert c.delta == pytest.approx((1.0 + 0.0 - 0.2) / 3)
    assert c.as_dict()["p"] == pytest.approx(1.0)   # +1 and -0.2: every sign flip is as far from 0
    assert "1 better, 1 worse" in c.describe()


def test_bootstrap_interval_covers_the_mean_and_narrows_with_more_queries() -> None:
    import numpy as np

    from kg_rag.eval.significance import bootstrap_ci

    rng = np.random.default_rng(7)
    small = list(rng.normal(0.05, 0.2, size=40))
    large = list(rng.normal(0.05, 0.2, size=1_000))
    lo, hi = bootstrap_ci(small)
    assert lo < float(np.mean(small)) < hi
    big_lo, big_hi = bootstrap_ci(large)
    assert big_hi - big_lo < (hi - lo) / 3   # width ~ 1/sqrt(n): 5x the queries, ~1/5 the width
    # the normal-theory interval of a mean, for comparison: the bootstrap's is close to it
    se = float(np.std(large, ddof=1)) / len(large) ** 0.5
    assert big_hi - big_lo == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert bootstrap_ci(small) == (lo, hi)   # seeded
    assert bootstrap_ci([]) == (0.0, 0.0)
    assert bootstrap_ci([0.1] * 5) == pytest.approx((0.1, 0.1))


def test_paired_reports_the_interval() -> None:
    c = paired({str(i): 1.0 for i in range(30)}, {str(i): 0.0 if i % 3 else 1.0 for i in range(30)})
    assert c.low <= c.delta <= c.high and c.low > 0
    assert "95 % CI" in c.describe() and c.as_dict()["ci95"] == [round(c.low, 4), round(c.high, 4)]
