"""Calibration of sense decisions: does a decision's probability say how often it is right?

Computed by ``eval wsd`` over the ambiguous instances the selector answered (two candidates or
more), for two numbers of each decision, reported side by side:

* ``probability`` — the chosen candidate's share of ``Selection.scores`` normalised over the
  instance's candidates (what the decision would claim if its scores were probabilities);
* ``confidence`` — the ``Selection.confidence`` field as stored (for the knowledge selector a
  power of the margin between the two best candidates, not a probability).

For each: a reliability table (equal-width bins over [0, 1]: n, mean predicted value, observed
accuracy), the expected calibration error (ECE: Σ_bins n_b / N · |accuracy_b − mean_b|), the
binary Brier score of the decision (mean (p − 1[right])²) and a risk–coverage curve (accuracy of
the most confident x % of decisions, x = 10, 20 … 100; ties keep corpus order, so the curve is
deterministic). Over the normalised scores also the multi-class Brier score
(mean over instances of Σ_c (p_c − y_c)²).

Several gold keys: an instance is answered right when the chosen sense matches *any* gold key, so
the multi-class Brier score treats the candidates that match a gold key as one class (its
probability the sum of theirs, its target 1) and every other candidate as its own class (target
0). When no candidate matches a gold key (the right sense is missing from the lexicon) the gold
class has probability 0 and adds 1 — the decision could not have been right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: equal-width bins of the reliability table: [0, 0.1), [0.1, 0.2), … [0.9, 1.0]
BINS = 10
#: coverages of the risk–coverage curve, in per cent
COVERAGES: tuple[int, ...] = tuple(range(10, 101, 10))


@dataclass(frozen=True, slots=True)
class Bin:
    low: float
    high: float
    n: int
    mean: float       # mean predicted value of the bin's decisions (0.0 when empty)
    accuracy: float   # share of them that is right (0.0 when empty)


def reliability(predicted: Sequence[float], right: Sequence[bool], bins: int = BINS) -> list[Bin]:
    """Equal-width bins over [0, 1]; a value of exactly 1.0 goes to the last bin, values outside
    [0, 1] to the nearest end bin."""
    if len(predicted) != len(right):
        raise ValueError("predicted and right differ in length")
    sums = [0.0] * bins
    oks = [0] * bins
    ns = [0] * bins
    for p, ok in zip(predicted, right, strict=True):
        i = min(bins - 1, max(0, int(p * bins)))
        ns[i] += 1
        sums[i] += p
        oks[i] += ok
    return [Bin(i / bins, (i + 1) / bins, ns[i], sums[i] / ns[i] if ns[i] else 0.0,
                oks[i] / ns[i] if ns[i] else 0.0) for i in range(bins)]


def ece(predicted: Sequence[float], right: Sequence[bool], bins: int = BINS) -> float:
    """Expected calibration error: the bins' |accuracy − mean predicted| weighted by bin size."""
    table = reliability(predicted, right, bins)
    total = sum(b.n for b in table)
    return sum(b.n * abs(b.accuracy - b.mean) for b in table) / total if total else 0.0


def brier_binary(predicted: Sequence[float], right: Sequence[bool]) -> float:
    """Mean (p − 1[right])² of the decisions."""
    if len(predicted) != len(right):
        raise ValueError("predicted and right differ in length")
    n = len(predicted)
    return sum((p - ok) ** 2 for p, ok in zip(predicted, right, strict=True)) / n if n else 0.0


def brier_multiclass(instances: Sequence[Sequence[tuple[float, bool]]]) -> float:
    """Mean over instances of Σ_c (p_c − y_c)², each instance a list of (probability, is gold)
    of its candidates; the gold candidates form one class (see the module docstring)."""
    total = 0.0
    for cands in instances:
        gold = sum(p for p, g in cands if g)
        total += (gold - 1.0) ** 2 + sum(p * p for p, g in cands if not g)
    return total / len(instances) if instances else 0.0


def risk_coverage(predicted: Sequence[float], right: Sequence[bool],
                  coverages: Sequence[int] = COVERAGES) -> list[tuple[int, int, float]]:
    """(coverage %, decisions kept, their accuracy) for the most confident ``coverage`` % of the
    decisions (at least one, rounded up); ties keep the input order (a stable sort)."""
    if len(predicted) != len(right):
        raise ValueError("predicted and right differ in length")
    order = sorted(range(len(predicted)), key=lambda i: -predicted[i])
    n = len(order)
    out = []
    for x in coverages:
        k = min(n, max(1, -(-n * x // 100))) if n else 0
        kept = order[:k]
        out.append((x, k, sum(right[i] for i in kept) / k if k else 0.0))
    return out


def by_threshold(predicted: Sequence[float], right: Sequence[bool],
                 threshold: float) -> tuple[int, int, int]:
    """The risk–coverage curve cut at a probability instead of a coverage: (decisions, how many
    fall below ``threshold`` — the ones ``knowledge+llm`` sends to the LLM —, how many of the
    others are right)."""
    if len(predicted) != len(right):
        raise ValueError("predicted and right differ in length")
    below = sum(1 for p in predicted if p < threshold)
    kept_right = sum(1 for p, ok in zip(predicted, right, strict=True) if p >= threshold and ok)
    return len(predicted), below, kept_right


def _r(x: float) -> float:
    return round(x, 4)


@dataclass(slots=True)
class Calibration:
    """The ambiguous decisions of one selector on one corpus, collected by ``eval wsd``."""

    probability: list[float] = field(default_factory=list)   # chosen candidate's normalised score
    confidence: list[float] = field(default_factory=list)    # Selection.confidence
    right: list[bool] = field(default_factory=list)
    candidates: list[list[tuple[float, bool]]] = field(default_factory=list)  # (p_c, is gold)
    without_scores: int = 0   # decisions whose scores were all zero or missing: uniform used
    multi_gold: int = 0       # decisions with more than one candidate matching a gold key

    def add(self, scores: Sequence[tuple[str, float]], ids: Sequence[str], gold: Sequence[bool],
            chosen: str, confidence: float, ok: bool) -> None:
        """One decision: ``scores`` as the selector returned them, ``ids`` and ``gold`` its
        candidates' ids and whether each matches a gold key (a repeated id counts once)."""
        is_gold: dict[str, bool] = {}
        for cid, g in zip(ids, gold, strict=True):
            is_gold[cid] = is_gold.get(cid, False) or g
        given = dict(scores)
        raw = [max(0.0, given.get(cid, 0.0)) for cid in is_gold]
        total = sum(raw)
        if total <= 0.0:
            self.without_scores += 1
            probs = [1.0 / len(raw)] * len(raw)
        else:
            probs = [v / total for v in raw]
        by_id = dict(zip(is_gold, probs, strict=True))
        self.probability.append(by_id.get(chosen, 0.0))
        self.confidence.append(confidence)
        self.right.append(ok)
        self.candidates.append([(by_id[c], g) for c, g in is_gold.items()])
        self.multi_gold += sum(is_gold.values()) > 1

    def __len__(self) -> int:
        return len(self.right)

    def summary(self, which: str) -> dict[str, Any]:
        """Reliability, ECE, binary Brier and risk–coverage of ``probability`` or ``confidence``."""
        pred = self.probability if which == "probability" else self.confidence
        d: dict[str, Any] = {
            "ece": _r(ece(pred, self.right)), "brier": _r(brier_binary(pred, self.right)),
            "reliability": [{"from": b.low, "to": b.high, "n": b.n, "mean": _r(b.mean),
                             "accuracy": _r(b.accuracy)} for b in reliability(pred, self.right)],
            "risk_coverage": [{"coverage": x, "n": k, "accuracy": _r(a)}
                              for x, k, a in risk_coverage(pred, self.right)]}
        if which == "probability":
            d["brier_multiclass"] = _r(brier_multiclass(self.candidates))
        return d

    def as_dict(self) -> dict[str, Any]:
        return {"n": len(self), "correct": sum(self.right), "without_scores": self.without_scores,
                "multi_gold": self.multi_gold, "probability": self.summary("probability"),
                "confidence": self.summary("confidence")}

    def table(self) -> str:
        """Markdown: reliability of both, then ECE/Brier, then risk–coverage."""
        if not self.right:
            return "calibration: no ambiguous decisions"
        p, c = self.summary("probability"), self.summary("confidence")
        lines = [f"calibration over {len(self)} ambiguous decisions (probability: the chosen "
                 "candidate's normalised score; confidence: the stored confidence field)", "",
                 "| bin | n (prob.) | mean prob. | right | n (conf.) | mean conf. | right |",
                 "|---|---:|---:|---:|---:|---:|---:|"]

        def cell(b: dict[str, Any]) -> str:
            return f"{b['n']} | {b['mean']:.3f} | {b['accuracy']:.3f}" if b["n"] else "0 | - | -"
        for bp, bc in zip(p["reliability"], c["reliability"], strict=True):
            lines.append(f"| {bp['from']:.1f}–{bp['to']:.1f} | {cell(bp)} | {cell(bc)} |")
        lines += ["", "| calibration | ECE | Brier (right/wrong) | Brier (multi-class) |",
                  "|---|---:|---:|---:|",
                  f"| probability | {p['ece']:.4f} | {p['brier']:.4f} | {p['brier_multiclass']:.4f} |",
                  f"| confidence | {c['ece']:.4f} | {c['brier']:.4f} | - |", "",
                  "| risk–coverage (accuracy of the most confident x %) | "
                  + " | ".join(f"{x}" for x in COVERAGES) + " |",
                  "|---|" + "---:|" * len(COVERAGES)]
        for name, s in (("by probability", p), ("by confidence", c)):
            lines.append(f"| {name} | " + " | ".join(f"{r['accuracy']:.3f}" for r in s["risk_coverage"])
                         + " |")
        notes = []
        if self.multi_gold:
            notes.append(f"{self.multi_gold} decision(s) with several gold candidates "
                         "(one gold class in the multi-class Brier score)")
        if self.without_scores:
            notes.append(f"{self.without_scores} decision(s) without scores (uniform probability)")
        return "\n".join(lines + ([""] + [f"- {n}" for n in notes] if notes else []))
