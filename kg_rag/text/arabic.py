"""Arabic clitics a label never carries: the definite article and the proclitics before it.

A thesaurus labels *محمية طبيعية* (nature reserve); a text writes *المحمية الطبيعية* — the
article on each word of the phrase (an adjective agrees with its noun in definiteness) — or
*والمحمية*, *بالمحمية*, *للمحمية* (and / in / for the reserve). simplemma's Arabic lemmas strip
the article from some words and not others (it reads *الطبيعية* as the masculine *طبيعي*), so a
phrase's second word never met its label; these splits are analyses of every word, as Hebrew's
prefix letters are (:mod:`kg_rag.text.hebrew`).
"""

from __future__ import annotations

#: the article, alone or after و (and), ف (so), ب (in, with), ك (like); ل (for) + ال is written لل
PREFIXES = ("ال", "وال", "فال", "بال", "كال", "لل", "ولل", "فلل")
#: letters a stem keeps at least (ال + one letter is a word of its own, e.g. الى)
MIN_STEM = 2


def prefix_splits(word: str) -> tuple[tuple[str, str], ...]:
    """(prefix, stem) for each article-with-proclitics prefix of ``word`` (a match key: no
    harakat), shortest prefix first."""
    return tuple((p, word[len(p):]) for p in sorted(PREFIXES, key=len)
                 if word.startswith(p) and len(word) - len(p) >= MIN_STEM)


__all__ = ["MIN_STEM", "PREFIXES", "prefix_splits"]
