"""Calibration metrics of ``eval wsd`` on hand-made decisions whose answers are known."""

from __future__ import annotations

import pytest

from kg_rag.eval.calibration import (
    Calibration,
    brier_binary,
    brier_multiclass,
    ece,
    reliability,
    risk_coverage,
)


def test_perfectly_calibrated_decisions_have_no_calibration_error() -> None:
    # 0.25 right one time in four, 0.75 three times in four
    pred = [0.25] * 4 + [0.75] * 4
    right = [True, False, False, False, True, True, False, True]
    assert ece(pred, right) == 0.0
    bins = reliability(pred, right)
    assert len(bins) == 10
    assert (bins[2].n, bins[2].mean, bins[2].accuracy) == (4, 0.25, 0.25)
    assert (bins[7].n, bins[7].mean, bins[7].accuracy) == (4, 0.75, 0.75)
    assert sum(b.n for b in bins) == 8
    # Brier of a calibrated forecaster is its refinement term, not zero: 0.25 · 0.75
    assert brier_binary(pred, right) == pytest.approx(0.1875)


def test_always_over_confident_decisions() -> None:
    pred = [0.9] * 10
    right = [True, False] * 5
    assert ece(pred, right) == pytest.approx(0.4)
    assert brier_binary(pred, right) == pytest.approx((0.01 + 0.81) / 2)
    # a certain and always right selector is perfect on both
    assert ece([1.0] * 3, [True] * 3) == 0.0 and brier_binary([1.0] * 3, [True] * 3) == 0.0


def test_bins_are_weighted_by_size_and_edges_go_up() -> None:
    # 1 decision at 0.05 that is right (error 0.95), 9 at 0.95 all right (error 0.05)
    pred, right = [0.05] + [0.95] * 9, [True] * 10
    assert ece(pred, right) == pytest.approx((0.95 + 9 * 0.05) / 10)
    bins = reliability([0.1, 1.0, 0.0, 1.7, -0.2], [True] * 5)
    assert [b.n for b in bins] == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert ece([], []) == 0.0 and brier_binary([], []) == 0.0
    with pytest.raises(ValueError):
        ece([0.5], [])


def test_multiclass_brier_and_several_gold_candidates() -> None:
    assert brier_multiclass([[(0.7, True), (0.2, False), (0.1, False)]]) == pytest.approx(0.14)
    # two gold candidates form one class: splitting the mass between them costs nothing
    assert brier_multiclass([[(0.5, True), (0.5, True)]]) == 0.0
    # no gold candidate: the gold class had probability 0
    assert brier_multiclass([[(0.6, False), (0.4, False)]]) == pytest.approx(1 + 0.36 + 0.16)
    assert brier_multiclass([[(1.0, True)], [(1.0, False), (0.0, True)]]) == pytest.approx(1.0)


def test_risk_coverage_keeps_input_order_among_ties() -> None:
    pred = [0.5, 0.9, 0.5, 0.5]
    right = [False, True, True, False]
    curve = risk_coverage(pred, right, coverages=(25, 50, 75, 100))
    # most confident first (index 1), then the tied ones in input order: 0, 2, 3
    assert curve == [(25, 1, 1.0), (50, 2, 0.5), (75, 3, pytest.approx(2 / 3)), (100, 4, 0.5)]
    # the same ties in another input order give the other, equally deterministic, answer
    assert risk_coverage([0.5, 0.9, 0.5, 0.5], [True, True, False, False],
                         coverages=(50,)) == [(50, 2, 1.0)]
    # coverage rounds up and keeps at least one decision
    assert [k for _, k, _ in risk_coverage([0.1, 0.2, 0.3], [True] * 3)] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    assert risk_coverage([], []) == [(x, 0, 0.0) for x in range(10, 101, 10)]
    ranked = risk_coverage([0.9, 0.8, 0.3, 0.2], [True, True, False, False], coverages=(50, 100))
    assert ranked == [(50, 2, 1.0), (100, 4, 0.5)]


def test_calibration_normalises_scores_over_the_candidates() -> None:
    cal = Calibration()
    # scores that do not sum to one, a repeated candidate id, a score for a non-candidate
    cal.add((("a", 3.0), ("b", 1.0), ("zz", 5.0)), ["a", "b", "a"], [False, True, False],
            chosen="a", confidence=0.5, ok=False)
    cal.add((), ["a", "b"], [True, True], chosen="a", confidence=0.0, ok=True)
    assert cal.probability == [0.75, 0.5] and cal.confidence == [0.5, 0.0]
    assert cal.candidates == [[(0.75, False), (0.25, True)], [(0.5, True), (0.5, True)]]
    assert (cal.without_scores, cal.multi_gold, len(cal)) == (1, 1, 2)
    d = cal.as_dict()
    assert d["n"] == 2 and d["correct"] == 1
    assert d["probability"]["brier_multiclass"] == pytest.approx((0.75**2 + 0.75**2 + 0.0) / 2, abs=1e-4)
    assert d["probability"]["ece"] == pytest.approx(0.625)   # bins 0.5 (right) and 0.7 (wrong)
    assert d["confidence"]["ece"] == pytest.approx(0.75)     # 0.0 right, 0.5 wrong
    assert "brier_multiclass" not in d["confidence"]
    assert [r["n"] for r in d["probability"]["risk_coverage"]][-1] == 2
    table = cal.table()
    assert "| probability | 0.6250 |" in table and "| confidence | 0.7500 |" in table
    assert "| by probability |" in table and "several gold candidates" in table
    assert "without scores" in table
    assert Calibration().table() == "calibration: no ambiguous decisions"
