"""Analyses of words: the forms under which a word may be in the dictionary (and how each was
got), its lemmas, stop words, and the content words of a gloss.

Every plausible analysis is kept — the dictionary and then the sense selector decide::

    analyses("הגבר", "הגבר", "he")
    # (("הגבר", "surface"), ("הגביר", "lemma"), ("גבר", "prefix:ה"))
    analyses("branches", "branches", "en")
    # (("branches", "surface"), ("branch", "lemma"))

Lemmas come from simplemma (offline, knows Hebrew and Arabic; its dictionaries kept decoded by
:mod:`.lemmatiser`) through one wrapper: :func:`lemmas`
(every lemma of a word, for the annotator) and :func:`lemma` (the lemma of its match key, for gloss
overlap), both for the languages simplemma has data for and nothing (resp. the word itself) for
the others. Hebrew prefix letters are peeled off by :mod:`.hebrew`; suffix guesses are a separate
fallback (:func:`fallback_forms`) used only when no analysis matched. Stop words
(``stopwords/<lang>.txt``) never yield forms; :func:`gloss_words` drops the gloss stop words of
``stopwords/gloss/<lang>.txt`` instead (a list of its own: see ``stopwords/README.md``).
"""

from __future__ import annotations

import logging
import re
from functools import cache, lru_cache
from importlib import resources
from typing import cast

import simplemma
from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

from kg_rag.text import arabic, gloss_cache, hebrew
from kg_rag.text.gloss_cache import MISSING, GlossCache
from kg_rag.text.normalise import match_key, strip_bidi, strip_niqqud
from kg_rag.text.tokenise import WORD, gloss_tokens

try:
    from kg_rag.text.lemmatiser import lemmatize
except ImportError:  # a simplemma without 2.x's dictionary factories: its dictionaries as they come

    def lemmatize(token: str, lang: str) -> str:
        return simplemma.lemmatize(token, lang=lang)


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


def _word_list(*path: str) -> frozenset[str]:
    """The words of a data file under ``stopwords/`` as match keys (empty if there is none)."""
    f = resources.files(__package__).joinpath("stopwords", *path)
    if not f.is_file():
        return frozenset()
    words = set()
    for line in f.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words.add(match_key(line))
    return frozenset(words)


@cache
def stopwords(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` (``stopwords/<lang>.txt``) as match keys (empty for a language
    without a list): function words, which never yield a mention on their own."""
    return _word_list(f"{lang}.txt")


@cache
def gloss_stopwords(lang: str) -> frozenset[str]:
    """The gloss stop words of ``lang`` (``stopwords/gloss/<lang>.txt``) as match keys (empty for
    a language without a list): function words and words too generic to tell senses apart,
    which gloss overlap does not count."""
    return _word_list("gloss", f"{lang}.txt")


def _lemma_code(lang: str) -> str | None:
    """simplemma's code for ``lang``, None for a language it has no data for."""
    code = _LEMMA_LANG.get(lang, lang)
    return code if code in SUPPORTED_LANGUAGES else None


@lru_cache(maxsize=200_000)
def lemmas(surface: str, lang: str) -> tuple[str, ...]:
    """Match keys of the lemmas simplemma gives for ``surface`` (case kept: German nouns need
    it) and for its case-folded form; the word itself is not included."""
    code = _lemma_code(lang)
    if code is None:
        return ()
    key = match_key(surface)
    out: dict[str, None] = {}
    for w in dict.fromkeys((surface, key)):
        found = match_key(lemmatize(w, code))
        if found and found != key:
            out.setdefault(found, None)
    return tuple(out)


@lru_cache(maxsize=200_000)
def lemma(word: str, lang: str) -> str:
    """The match key of the lemma simplemma gives for ``word``'s match key; the match key itself
    for a language simplemma has no data for."""
    key = match_key(word)
    code = _lemma_code(lang)
    return key if code is None else match_key(lemmatize(key, code))


def gloss_words(text: str, lang: str) -> list[str]:
    """Content-word lemmas of ``text`` for gloss overlap, in order: gloss words
    (:func:`~kg_rag.text.tokenise.gloss_tokens`) of two letters or more whose lemma is too, and
    neither it nor the word a gloss stop word (:func:`gloss_stopwords`)."""
    out = []
    for w in gloss_tokens(text):
        lw = _gloss_word(w, lang)
        if lw is not None:
            out.append(lw)
    return out


@lru_cache(maxsize=200_000)
def _gloss_word(word: str, lang: str) -> str | None:
    """The lemma :func:`gloss_words` keeps for the token ``word``, None if it keeps none. Cached
    per token (as :func:`lemma`): the knowledge selector reads the glosses of tens of thousands
    of senses, whose words recur, and the match key of each was computed anew; and kept between
    processes (:mod:`.gloss_cache`)."""
    if len(word) < 2:
        return None
    kept = _kept()
    hit = kept.get(word, lang)
    if hit is not MISSING:
        return cast("str | None", hit)
    found = _gloss_lemma(word, lang)
    kept.put(word, lang, found)
    return found


@cache
def _kept() -> GlossCache:
    """The gloss words kept between processes (:mod:`.gloss_cache`), read on first use."""
    return gloss_cache.opened()


def _gloss_lemma(word: str, lang: str) -> str | None:
    stop = gloss_stopwords(lang)
    lw = lemma(word, lang)
    if lw in stop or match_key(word) in stop or len(lw) < 2:
        return None
    return lw


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
    elif lang == "ar":
        for prefix, stem in arabic.prefix_splits(word):
            if stem not in stops:
                out.setdefault(stem, f"prefix:{prefix}")
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


__all__ = ["HOW_ORDER", "analyses", "clean_surface", "fallback_forms", "gloss_stopwords", "gloss_words",
           "how_rank", "lemma", "lemmas", "stopwords"]


def lemma_at(text: str, lemma: str, lang: str) -> tuple[int, int] | None:
    """Where ``lemma`` occurs in ``text``: as written (any case), else — a one-word lemma — the
    first word whose lemmas (:func:`lemmas`) include it (an example's "banked" for *bank*)."""
    m = re.search(r"(?<!\w)" + re.escape(lemma) + r"(?!\w)", text, re.IGNORECASE)
    if m is not None:
        return m.start(), m.end()
    if " " in lemma:
        return None
    low = lemma.lower()
    for w in WORD.finditer(text):
        if low in lemmas(w.group(), lang):
            return w.start(), w.end()
    return None
