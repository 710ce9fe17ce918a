"""Hebrew morphology the annotator needs: prefix letters and plural/feminine suffix guesses.

Prefix letters attach to the word without a space, in a fixed order:

1. ``ו`` (and),
2. a subordinator: ``ש`` (that), ``כש`` (when), ``מש`` (since), ``לכש`` (once),
3. one preposition ``ב כ ל מ`` (in, as, to, from),
4. the article ``ה`` — written after ``ו``, ``ש`` or ``מ`` but elided after ``ב כ ל``
   (בבית = ב+ה+בית), so ``בה…`` is not a preposition+article.

``prefix_splits("וכשהגבר")`` → ``(("ו", "כשהגבר"), ("וכ", "שהגבר"), ("וכש", "הגבר"), ("וכשה", "גבר"))``.
Every split is an *alternative* analysis; the dictionary decides which stems exist.
All functions take and return match keys (no niqqud, final letters as written).
"""

from __future__ import annotations

from functools import lru_cache

_CONJ = ("", "ו")
_SUBORD = ("", "ש", "כש", "מש", "לכש")
_PREP = ("", "ב", "כ", "ל", "מ")


def _prefixes() -> frozenset[str]:
    out = set()
    for c in _CONJ:
        for s in _SUBORD:
            for p in _PREP:
                out.add(c + s + p)
                if p not in ("ב", "כ", "ל"):  # ה is elided after ב כ ל
                    out.add(c + s + p + "ה")
    out.discard("")
    return frozenset(out)


#: every valid sequence of prefix letters
PREFIXES: frozenset[str] = _prefixes()
_MAX_PREFIX = max(len(p) for p in PREFIXES)
#: a stem must keep at least this many letters
MIN_STEM = 2

_FINAL = {"כ": "ך", "מ": "ם", "נ": "ן", "פ": "ף", "צ": "ץ"}
_MEDIAL = {v: k for k, v in _FINAL.items()}


def is_hebrew_word(word: str) -> bool:
    return bool(word) and all("\u05d0" <= ch <= "\u05ea" or ch in "'\"" for ch in word)


@lru_cache(maxsize=65536)
def prefix_splits(word: str) -> tuple[tuple[str, str], ...]:
    """(prefix, stem) for every valid prefix sequence at the start of ``word``, shortest first."""
    out = []
    for n in range(1, min(_MAX_PREFIX, len(word) - MIN_STEM) + 1):
        p = word[:n]
        if p in PREFIXES:
            out.append((p, word[n:]))
    return tuple(out)


def final_form(stem: str) -> str:
    """``ענפ`` → ``ענף``: a stem cut before a suffix ends in the final letter form."""
    if stem and stem[-1] in _FINAL:
        return stem[:-1] + _FINAL[stem[-1]]
    return stem


def suffix_guesses(word: str) -> tuple[str, ...]:
    """Possible base forms of a plural or feminine ``word`` (a fallback when nothing else
    matched): ים → ∅, ות → ∅/ה/ת, ה → ∅, ית → י; stems end in final letters."""
    out: list[str] = []
    if len(word) >= MIN_STEM + 2 and word.endswith("ים"):
        out.append(final_form(word[:-2]))
    if len(word) >= MIN_STEM + 2 and word.endswith("ות"):
        stem = word[:-2]
        out += [final_form(stem), stem + "ה", stem + "ת"]
    if len(word) >= MIN_STEM + 2 and word.endswith("ית"):
        out.append(word[:-1])
    if len(word) >= MIN_STEM + 1 and word.endswith("ה"):
        out.append(final_form(word[:-1]))
    seen: dict[str, None] = {}
    for f in out:
        if f != word:
            seen.setdefault(f, None)
    return tuple(seen)


__all__ = ["MIN_STEM", "PREFIXES", "final_form", "is_hebrew_word", "prefix_splits", "suffix_guesses"]
