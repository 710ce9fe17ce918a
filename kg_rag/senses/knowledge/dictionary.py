"""Signals for the readings of a dictionary whose senses point at no concept.

A sense-only reading (ontology/DATA-MODEL.md, "Sense-only readings") is no node of the concept
graph: it has no PageRank, no WordNet sense order and no corpus frequency. What the store has is
the dictionary's own text, so the knowledge selector weighs it in its own regime
(:attr:`~kg_rag.senses.knowledge.config.KnowledgeSelectorConfig.dictionary`):

* **prior** — how much the dictionary says about a sense: ``log(1 + distinct gloss words of its
  definitions and notes)``. A lexicographer writes more (more renderings, more glosses) for a
  word met often, so the length of an entry stands in for its frequency when there are no
  counts; entries are separate homographs, so their order is no frequency order and is not used;
* **part of speech** — candidates of several parts of speech (a noun and a verb spelt alike) are
  told apart by the word's affixes (:func:`hebrew_pos_scores`, Hebrew only: other languages get
  no such signal yet);
* **gloss overlap** — as for every reading (the selector's Lesk, with the context words'
  English lemmas reached through the wordnets).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kg_rag.model import Candidate, SelectionRequest, SenseEvidence
from kg_rag.senses.knowledge.config import PosCues
from kg_rag.text.analyse import gloss_words
from kg_rag.text.hebrew_affixes import split_affixes
from kg_rag.text.normalise import base_language, match_key

#: the parts of speech the affixes speak for; every other one (preposition, pronoun…) is "other"
KINDS = ("noun", "verb", "adjective", "other")
_IMPERFECT = "יתאנ"          # preformatives of the prefix conjugation
_PROCLITICS = ("", "ש", "ה", "ב", "כ", "ל", "מ")
#: plural endings, and the possessive suffixes of nouns (``י`` my, ``יו`` his, ``יהם`` their, …)
_NOUN_SUFFIXES = frozenset("ים ות י יו יה יך יכם יהם ינו ותי ותיו ותם".split())


def sense_only(cands: Sequence[Candidate]) -> bool:
    """Are all of these readings senses that stand for themselves (no concept behind them)?"""
    return bool(cands) and all(c.sense is not None and c.concept == c.sense for c in cands)


def richness_prior(evidence: Sequence[SenseEvidence]) -> list[float]:
    """``log(1 + distinct gloss words)`` of each candidate's definitions and notes."""
    out = []
    for ev in evidence:
        seen: set[str] = set()
        for t in ev.definitions + ev.usage:
            seen.update(gloss_words(t.text, t.lang or "en"))
        out.append(math.log1p(len(seen)))
    return out


def _kind(pos: str | None) -> str:
    p = pos or ""
    if p.startswith("adjective"):
        return "adjective"
    return p if p in ("noun", "verb") else "other"


def hebrew_pos_scores(word: str, lemma: str, cues: PosCues) -> dict[str, float]:
    """Log-odds per part of speech of the Hebrew ``word`` read as ``lemma``, from its affixes
    (set by hand from Hebrew grammar; strengths :class:`PosCues`):

    * ``ו`` + ``י ת א נ`` before the lemma (the narrative past, *wayyiqtol*): verb, strong;
    * ``י ת א נ`` right before the lemma, after at most one proclitic: verb, medium;
    * the article ``ה`` right before the lemma (alone or after ``ו ש מ``): noun, medium;
      adjective, weak;
    * ``ב`` or ``כ`` alone before the lemma: noun, weak (an infinitive after them is a verb);
    * a plural ending (``ים`` / ``ות``) or a possessive suffix (``י`` / ``יו`` / ``יהם`` …) after
      it: noun, weak; ``תי`` / ``תם`` / ``תן`` (the suffix conjugation) or the object suffix
      ``ני`` after it: verb, medium; ``ו`` alone (they did / will do): verb, weak.
    """
    score = dict.fromkeys(KINDS, 0.0)
    split = split_affixes(match_key(word), match_key(lemma))
    if split is None:
        return score
    pre, _, suf = split
    if pre.startswith("ו"):
        if len(pre) == 2 and pre[1] in _IMPERFECT:
            score["verb"] += cues.strong
        pre = pre[1:]
    if pre[-1:] and pre[-1] in _IMPERFECT and pre[:-1] in _PROCLITICS:
        score["verb"] += cues.medium
    elif pre in ("ה", "שה", "מה"):
        score["noun"] += cues.medium
        score["adjective"] += cues.weak
    elif pre in ("ב", "כ"):
        score["noun"] += cues.weak
    if suf in _NOUN_SUFFIXES:
        score["noun"] += cues.weak
    elif suf in ("תי", "תם", "תן") or suf.endswith("ני"):
        score["verb"] += cues.medium
    elif suf == "ו":
        score["verb"] += cues.weak
    return score


def pos_fit(req: SelectionRequest, cues: PosCues) -> list[float] | None:
    """Per candidate, log P(its part of speech | the word's affixes) — None unless the
    candidates mix parts of speech and the mention is Hebrew."""
    cands = req.mention.candidates
    kinds = {_kind(c.pos) for c in cands}
    if len(kinds) < 2 or base_language(req.mention.lang) != "he":
        return None
    out = []
    for c in cands:
        score = hebrew_pos_scores(req.mention.text, c.lemma or req.mention.text, cues)
        z = math.log(sum(math.exp(score[k]) for k in kinds))
        out.append(score[_kind(c.pos)] - z)
    return out


__all__ = ["KINDS", "hebrew_pos_scores", "pos_fit", "richness_prior", "sense_only"]
