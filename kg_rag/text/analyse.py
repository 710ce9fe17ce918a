"""Analyses of one word: the forms under which it may be in the dictionary, and how each was got.

Every plausible analysis is kept — the dictionary and then the sense selector decide::

    analyses("הגבר", "הגבר", "he")
    # (("הגבר", "surface"), ("הגביר", "lemma"), ("גבר", "prefix:ה"))
    analyses("branches", "branches", "en")
    # (("branches", "surface"), ("branch", "lemma"))

Lemmas come from simplemma (offline, knows Hebrew and Arabic); Hebrew prefix letters are
peeled off by :mod:`.hebrew`; suffix guesses are a separate fallback (:func:`fallback_forms`)
used only when no analysis matched. Stop words (``stopwords/<lang>.txt``) never yield forms.
"""

from __future__ import annotations

import logging
from functools import cache, lru_cache
from importlib import resources

import simplemma
from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

from kg_rag.text import hebrew
from kg_rag.text.normalise import match_key, strip_bidi, strip_niqqud

log = logging.getLogger(__name__)

#: how an analysis reached its form, best first (a candidate keeps the best way it was reached)
HOW_ORDER = ("surface", "mwe", "lemma", "mwe+lemma", "prefix", "suffix")

# simplemma's code where it differs from ours
_LEMMA_LANG = {"no": "nb"}


def how_rank(how: str) -> int:
    """Sort key of a ``matched_by`` value (surface first, guesses last)."""
    head = how.split(":", 1)[0].split("+", 1)[0]
    if how.startswith("prefix"):
        base = HOW_ORDER.index("prefix")
        return base * 10 + (2 if "suffix" in how else 1 if "lemma" in how else 0)
    if head == "mwe":
        return HOW_ORDER.index("mwe+lemma" if "+" in how else "mwe") * 10
    return (HOW_ORDER.index(head) if head in HOW_ORDER else len(HOW_ORDER)) * 10


@cache
def stopwords(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` as match keys (empty for a language without a list)."""
    f = resources.files(__package__).joinpath("stopwords", f"{lang}.txt")
    if not f.is_file():
        return frozenset()
    words = set()
    for line in f.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words.add(match_key(line))
    return frozenset(words)


@lru_cache(maxsize=200_000)
def lemmas(surface: str, lang: str) -> tuple[str, ...]:
    """Match keys of the lemmas simplemma gives for ``surface`` (case kept: German nouns need
    it) and for its case-folded form; the word itself is not included."""
    code = _LEMMA_LANG.get(lang, lang)
    if code not in SUPPORTED_LANGUAGES:
        return ()
    key = match_key(surface)
    out: dict[str, None] = {}
    for w in dict.fromkeys((surface, key)):
        lemma = match_key(simplemma.lemmatize(w, lang=code))
        if lemma and lemma != key:
            out.setdefault(lemma, None)
    return tuple(out)


def clean_surface(raw: str) -> str:
    """The original spelling of a word with niqqud and bidi controls removed (case kept)."""
    return strip_niqqud(strip_bidi(raw))


def analyses(word: str, surface: str, lang: str) -> tuple[tuple[str, str], ...]:
    """(form, how) for every analysis of ``word`` (its match key; ``surface`` = original
    spelling), the word itself first. Stop words and stems that are stop words are left out."""
    stops = stopwords(lang)
    if word in stops:
        return ()
    out: dict[str, str] = {word: "surface"}
    for lemma in lemmas(surface, lang):
        if lemma not in stops:
            out.setdefault(lemma, "lemma")
    if lang == "he":
        for prefix, stem in hebrew.prefix_splits(word):
            if stem in stops:
                continue
            out.setdefault(stem, f"prefix:{prefix}")
            for lemma in lemmas(stem, lang):
                if lemma not in stops:
                    out.setdefault(lemma, f"prefix:{prefix}+lemma")
    return tuple(out.items())


def fallback_forms(word: str, lang: str) -> tuple[tuple[str, str], ...]:
    """Guessed base forms when no analysis of ``word`` is in the dictionary (Hebrew plural and
    feminine suffixes, also after prefix letters)."""
    if lang != "he":
        return ()
    stops = stopwords(lang)
    out: dict[str, str] = {}
    for form in hebrew.suffix_guesses(word):
        if form not in stops:
            out.setdefault(form, "suffix")
    for prefix, stem in hebrew.prefix_splits(word):
        for form in hebrew.suffix_guesses(stem):
            if form not in stops:
                out.setdefault(form, f"prefix:{prefix}+suffix")
    return tuple(out.items())


__all__ = ["HOW_ORDER", "analyses", "clean_surface", "fallback_forms", "how_rank", "lemmas",
           "stopwords"]
