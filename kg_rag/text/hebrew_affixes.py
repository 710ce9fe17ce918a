"""Where a known lemma sits in an unvocalised Hebrew word: the letters before it and after it.

``split_affixes("וכבשה", "כבש")`` → ``("ו", "כבש", "ה")``. The lemma's letters are found in
order; the matres lectionis ``ו`` and ``י`` may stand between them (``שומר`` for ``שמר``), a final
``ה`` of the lemma may be written ``ת`` (construct / before a suffix: ``תפלתי``) or dropped
(``ויבז`` for ``בזה``), and final letter forms count as their medial forms. Among several
placements the one with the fewest inserted letters, then the earliest, wins. What is left
before the lemma holds proclitics and inflectional prefixes, what is left after it suffixes;
:func:`kg_rag.senses.knowledge.dictionary.hebrew_pos_scores` reads parts of speech from them.
"""

from __future__ import annotations

from functools import lru_cache

_MEDIAL = {"ך": "כ", "ם": "מ", "ן": "נ", "ף": "פ", "ץ": "צ"}
_WEAK = "וי"


def medial(text: str) -> str:
    """``text`` with each final letter form (ך ם ן ף ץ) as its medial one."""
    return "".join(_MEDIAL.get(ch, ch) for ch in text)


def _variants(lemma: str) -> tuple[str, ...]:
    out = [lemma]
    if lemma.endswith("ה") and len(lemma) > 2:
        out += [lemma[:-1] + "ת", lemma[:-1]]
    return tuple(out)


@lru_cache(maxsize=65536)
def split_affixes(word: str, lemma: str) -> tuple[str, str, str] | None:
    """(prefix, lemma as written, suffix) of ``word`` (match keys: no niqqud), or None when the
    lemma's letters are not found in it."""
    w, lem = medial(word), medial(lemma)
    best: tuple[int, int, str, str, str] | None = None
    for variant in _variants(lem):
        for i in range(len(w)):
            j, k, inserted = i, 0, 0
            while j < len(w) and k < len(variant):
                if w[j] == variant[k]:
                    j, k = j + 1, k + 1
                elif w[j] in _WEAK and k > 0:
                    j, inserted = j + 1, inserted + 1
                else:
                    break
            if k == len(variant):
                found = (inserted, i, word[:i], word[i:j], word[j:])
                if best is None or found[:2] < best[:2]:
                    best = found
                break
    return None if best is None else (best[2], best[3], best[4])


@lru_cache(maxsize=65536)
def split_weak(word: str, lemma: str) -> tuple[str, str, str] | None:
    """(prefix, stem as written, suffix) of ``word`` read as a form of the three-letter root
    ``lemma`` that has lost a weak radical — only where :func:`split_affixes` finds no placement:
    the middle ``ו`` / ``י`` of a hollow root (``ויקץ`` of ``קוץ``, ``ספו`` of ``סוף``), the repeated
    last radical of a geminate root (``גל`` of ``גלל``), or the first ``נ`` / ``י`` (``ותשק`` of
    ``נשק``) — this one only after a prefix-conjugation letter or the stem's ``ה``, as a bare
    two-letter stem is found in too many words. None otherwise."""
    lem = medial(lemma)
    if len(lem) != 3 or split_affixes(word, lemma) is not None:
        return None
    tries: list[tuple[str, bool]] = []
    if lem[1] in _WEAK:
        tries.append((lem[0] + lem[2], False))
    if lem[1] == lem[2]:
        tries.append((lem[:2], False))
    if lem[0] in "ני":
        tries.append((lem[1:], True))
    for stem, after_prefix in tries:
        found = split_affixes(word, stem)
        if found is None:
            continue
        pre = found[0][1:] if found[0].startswith("ו") else found[0]
        if after_prefix and not (pre[-1:] and pre[-1] in "יתאנה"):
            continue
        return found
    return None


__all__ = ["medial", "split_affixes", "split_weak"]
