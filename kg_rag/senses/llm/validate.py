"""Validation of the model's answer against the ids of the prompt.

An id is valid only if it is *exactly* one of the ids listed under that mention: no trimming, no
Unicode folding (Cyrillic ``С1`` or fullwidth ``Ｓ1`` are different ids), no ids of another
mention. Anything else — malformed JSON, a missing or duplicated mention, a confidence outside
0–1, an answer cut off (``finish_reason`` ``length``) or filtered (``content_filter``) — makes
that mention *invalid*: it gets a problem text and never a chosen sense.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kg_rag.senses.llm.prompt import MentionSlot, clean

MAX_RATIONALE = 300
_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The validated answer for one mention: a sense id, or a problem."""

    sense: str | None          # S-id local to the prompt; None when invalid
    confidence: float = 0.0
    rationale: str = ""
    problem: str = ""          # why invalid ("" when valid)

    @property
    def valid(self) -> bool:
        return self.sense is not None


def shown(value: object) -> str:
    """A value from the model as the user and the model should see it (look-alikes escaped)."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _parse(content: str | None) -> tuple[list[Any] | None, str]:
    if content is None or not content.strip():
        return None, "empty answer"
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:  # local models often wrap JSON in a Markdown fence
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None, f"answer is not valid JSON (starts {shown(content.strip()[:30])})"
    if not isinstance(data, dict) or not isinstance(data.get("answers"), list):
        return None, 'answer is not a JSON object with an "answers" list'
    return data["answers"], ""


def _confidence(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    c = float(value)
    return c if math.isfinite(c) and 0.0 <= c <= 1.0 else None


def _check(item: dict[str, Any], slot: MentionSlot) -> Verdict:
    sense = item.get("sense")
    ids = slot.sense_ids
    if not isinstance(sense, str) or sense not in ids:
        return Verdict(None, problem=f"{shown(sense)} is not one of {slot.mid}'s ids "
                                     f"({', '.join(ids)})")
    conf = _confidence(item.get("confidence"))
    if conf is None:
        return Verdict(None, problem=f"confidence {shown(item.get('confidence'))} is not a "
                                     "number from 0.0 to 1.0")
    rationale = item.get("rationale", "")
    text = clean(rationale) if isinstance(rationale, str) else ""
    if len(text) > MAX_RATIONALE:
        text = text[: MAX_RATIONALE - 1] + "…"
    return Verdict(sense, conf, text)


def validate(content: str | None, finish_reason: str | None,
             slots: Sequence[MentionSlot]) -> dict[str, Verdict]:
    """One :class:`Verdict` per slot (keyed by mention id)."""
    if finish_reason in ("length", "content_filter"):
        why = ("answer was cut off (finish_reason length)" if finish_reason == "length"
               else "answer was withheld by the provider's content filter")
        return {s.mid: Verdict(None, problem=why) for s in slots}
    answers, problem = _parse(content)
    if answers is None:
        return {s.mid: Verdict(None, problem=problem) for s in slots}
    by_mid = {s.mid: s for s in slots}
    found: dict[str, list[dict[str, Any]]] = {}
    for item in answers:
        if isinstance(item, dict) and isinstance(item.get("mention"), str) \
                and item["mention"] in by_mid:
            found.setdefault(item["mention"], []).append(item)
    verdicts: dict[str, Verdict] = {}
    for s in slots:
        items = found.get(s.mid, [])
        if not items:
            verdicts[s.mid] = Verdict(None, problem=f"no answer for {s.mid}")
            continue
        checked = [_check(i, s) for i in items]
        if len({v.sense for v in checked}) > 1:
            verdicts[s.mid] = Verdict(None, problem=f"conflicting answers for {s.mid}")
        else:
            verdicts[s.mid] = checked[0]
    return verdicts
