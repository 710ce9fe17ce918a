"""What the mention's own spelling says about its candidates, and the sentence around it.

A lexicon that has entries differing only in case (``China`` the country, ``china`` a pebble;
``March`` and ``march``) tells them apart by the mention's case: a lower-case mention is not the
proper-noun entry, and a capitalised one in the middle of a sentence is not the common-noun
entry (at the start of a sentence, or in capitals, case says nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg_rag.model import Candidate, Mention

_SENTENCE_END = re.compile(r"[.!?\u05c3\u061f\u3002](?=\s)")


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Character bounds of the sentence of ``text`` around ``start:end`` (all of it when the
    offsets do not fit)."""
    if not 0 <= start <= end <= len(text):
        return 0, len(text)
    lo = 0
    for found in _SENTENCE_END.finditer(text, 0, start):
        lo = found.end()
    after = _SENTENCE_END.search(text, end)
    return lo, after.end() if after else len(text)


def sentence(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` around ``start:end``."""
    lo, hi = sentence_bounds(text, start, end)
    return text[lo:hi]


def case_mismatch(mention: Mention, context: str, cands: Sequence[Candidate]) -> list[float]:
    """1.0 for each candidate whose lemma's case contradicts the mention's, else 0.0."""
    text = mention.text
    if not text or not text[:1].isalpha():
        return [0.0] * len(cands)
    upper = text[:1].isupper()
    lo, _ = sentence_bounds(context, mention.start, mention.end)
    in_text = 0 <= mention.start <= len(context)
    initial = not in_text or not any(ch.isalnum() for ch in context[lo : mention.start])
    out = []
    for c in cands:
        lemma = c.lemma or ""
        if not lemma[:1].isalpha() or lemma[:1].isupper() == upper or lemma[:1].lower() == lemma[:1].upper():
            out.append(0.0)
        elif not upper:
            out.append(1.0)  # a lower-case mention is not the capitalised entry
        else:
            out.append(0.0 if initial or text.isupper() else 1.0)
    return out
