"""Words for gloss overlap (extended Lesk): tokenise, lemmatise (simplemma), drop stop words."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import simplemma

from kg_rag.text.normalise import match_key

_WORD = re.compile(r"[^\W\d_](?:[\w'\u05f3\u05f4-]*\w)?", re.UNICODE)

# function words and very generic gloss words; IDF weighting handles the rest
STOP: dict[str, frozenset[str]] = {
    "en": frozenset("""
a about above after again against all also am an and any are as at be been before being below
between both but by can could did do does doing down during each either else ever every few for
from further had has have having he her here hers herself him himself his how i if in into is it
its itself just least less let like many may me might more most much must my myself neither no nor
not now of off often on once one only or other others ought our ours ourselves out over own per
rather same she should so some such than that the their theirs them themselves then there these
they this those though through thus to too under until up upon us usually very was we were what
when where whether which while who whom whose why will with within without would yet you your
yours yourself something someone somebody anything thing things especially used use using
having kind sort way person people make made cause become etc e.g. i.e. s
""".split()),
    "es": frozenset("""
a al algo alguno algunos ante antes como con contra cual cuando de del desde donde dos durante e
el ella ellas ellos en entre era es esa ese eso esta este esto estos fue ha hace han hasta hay la
las le les lo los más me mi muy nada ni no nos o otra otro para pero por porque que quien se ser
si sido sin sobre su sus también tan te tiene todo todos tu un una uno unos y ya yo
""".split()),
    "fr": frozenset("""
à a au aux avec ce ces cette comme dans de des du elle elles en est et être eu il ils je la le les
leur leurs lui ma mais me même mes moi mon ne ni nos notre nous on ont ou où par pas plus pour qu
que qui sa sans se ses son sont sur ta te tes toi ton tous tout très tu un une vos votre vous y
l d qu n s c j m
""".split()),
    "he": frozenset("""
של את על עם זה זו זאת הוא היא הם הן אני אתה את אנחנו לא כן גם או אבל כי אם כל יש אין היה היתה
מה מי איך כך כמו רק עוד אשר בין אל עד לפני אחרי
""".split()),
}

_LANGS = frozenset({"en", "es", "fr", "de", "it", "pt", "nl", "he", "ar", "ru", "pl", "ca"})


@lru_cache(maxsize=200_000)
def lemma(word: str, lang: str) -> str:
    """The lemma of one word (match key form); the word itself for an unsupported language."""
    key = match_key(word)
    if lang in _LANGS:
        try:
            key = match_key(simplemma.lemmatize(key, lang=lang))
        except ValueError:  # simplemma refuses a language it has no data for
            pass
    return key


def words(text: str, lang: str) -> list[str]:
    """Content-word lemmas of ``text`` (stop words and one-letter words removed), in order."""
    stop = STOP.get(lang, frozenset())
    out = []
    for m in _WORD.finditer(text):
        w = m.group(0)
        if len(w) < 2:
            continue
        lw = lemma(w, lang)
        if lw in stop or match_key(w) in stop or len(lw) < 2:
            continue
        out.append(lw)
    return out


def idf_table(documents: Iterable[Iterable[str]]) -> tuple[dict[str, float], float]:
    """Inverse document frequency of each word over ``documents``, and the IDF of an unseen word."""
    df: dict[str, int] = {}
    n = 0
    for doc in documents:
        n += 1
        for w in set(doc):
            df[w] = df.get(w, 0) + 1
    unseen = math.log((n + 1) / 1)
    return {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}, unseen


def overlap(context: Mapping[str, float], signature: Iterable[str], idf: Mapping[str, float],
            unseen: float) -> float:
    """IDF-weighted overlap between weighted context words and a sense's signature words."""
    total = 0.0
    for w in set(signature):
        cw = context.get(w)
        if cw:
            total += cw * idf.get(w, unseen)
    return total
