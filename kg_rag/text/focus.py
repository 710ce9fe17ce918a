"""The word a question is about, named by the word itself: ``focus_span(q, "bank#2")`` → the
(start, end) offsets of its second occurrence in the question ``q``.

::

    focus_span("the bank by the river bank", "bank#2")   # (22, 26)
    focus_span("הפירות העמיסו על הבדים", "בדים")          # (18, 22): inside the word, after ה
"""

from __future__ import annotations

import re

from kg_rag.errors import InputError
from kg_rag.text.normalise import nfc, strip_bidi


def focus_span(q: str, focus: str) -> tuple[int, int]:
    """The (start, end) of the word or phrase ``focus`` in the question ``q`` (``word#n``: its
    n-th occurrence): matched ignoring case and spacing, whole words first, else inside words
    (a Hebrew word with prefix letters); InputError when it is not there."""
    text = nfc(strip_bidi(focus)).strip()
    nth = 1
    m = re.fullmatch(r"(.*\S)\s*#(\d{1,4})", text)
    if m:
        text, nth = m.group(1), int(m.group(2))
    words = text.split()
    if not words:
        raise InputError("the focus is empty; give START:END offsets or a word of the question")
    if nth < 1:
        raise InputError(f"occurrences count from #1, not #{nth}")
    pattern = r"\s+".join(re.escape(w) for w in words)
    hits = [x.span() for x in re.finditer(r"(?<!\w)" + pattern + r"(?!\w)", q, re.IGNORECASE)]
    if not hits:
        hits = [x.span() for x in re.finditer(pattern, q, re.IGNORECASE)]
    if not hits:
        raise InputError(f"the focus {text!r} is not in the question; give a word of it or START:END")
    if nth > len(hits):
        raise InputError(f"the focus {text!r} occurs {len(hits)} time{'s' if len(hits) != 1 else ''} "
                         f"in the question; #{nth} is not there")
    return hits[nth - 1]


__all__ = ["focus_span"]
