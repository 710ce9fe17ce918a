"""What an ``eval wsd`` run says about LLM use: :class:`LlmStats` (requests, tokens, calls per
1,000 mentions) and :class:`Tradeoff` (the knowledge selector's decisions cut at a
``knowledge+llm`` threshold: how many would go to the LLM, how often the rest are right)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: thresholds whose trade-off ``eval wsd`` shows for knowledge+llm (and the one in use)
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


@dataclass(frozen=True, slots=True)
class LlmStats:
    """What the LLM cost on the run: requests that answered, tokens the API reported."""

    requests: int
    tokens_in: int
    tokens_out: int
    mentions: int      # scored instances
    sent: int          # of them, decided with an LLM request (asked, for knowledge+llm)

    @property
    def per_1000(self) -> float:
        """LLM requests per 1,000 scored mentions."""
        return 1000 * self.requests / self.mentions if self.mentions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "mentions": self.mentions, "sent": self.sent,
                "calls_per_1000_mentions": round(self.per_1000, 1)}

    def describe(self) -> str:
        return (f"LLM: {self.requests} request(s) for {self.mentions} mentions "
                f"({self.per_1000:.1f} per 1,000 mentions; {self.sent} mentions decided with a "
                f"request), {self.tokens_in} tokens in, {self.tokens_out} out"
                + (f" ({self.tokens_in / self.sent:.0f} in per mention sent)" if self.sent else ""))


@dataclass(frozen=True, slots=True)
class Tradeoff:
    threshold: float
    decisions: int     # ambiguous knowledge decisions
    sent: int          # of them below the threshold: to the LLM
    kept_right: int    # of the rest, right

    def as_dict(self) -> dict[str, Any]:
        kept = self.decisions - self.sent
        return {"threshold": self.threshold, "decisions": self.decisions, "to_llm": self.sent,
                "to_llm_share": round(self.sent / self.decisions, 4) if self.decisions else 0.0,
                "kept": kept, "kept_right": self.kept_right,
                "kept_accuracy": round(self.kept_right / kept, 4) if kept else None}

    def describe(self) -> str:
        kept = self.decisions - self.sent
        rest = (f"the knowledge selector is right on {pct(self.kept_right, kept)} of the other "
                f"{kept}" if kept else "none are left to the knowledge selector")
        return (f"at threshold {self.threshold:g}, {pct(self.sent, self.decisions)} of the "
                f"ambiguous mentions ({self.sent} of {self.decisions}) go to the LLM; {rest}")


def pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f} %" if n else "-"


__all__ = ["THRESHOLDS", "LlmStats", "Tradeoff", "pct"]
