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
* **gloss overlap** — as for every reading (the selector's Lesk: the context words' English
  lemmas reached through the wordnets, a Hebrew WordNet lemma → its ILI concept → the
  concept's English lemmas, against the sense's definitions, notes and label);
* **context** — with the encoder installed, the same English lemmas read as one text by the
  English encoder and compared with the sense's labels and definitions
  (:meth:`~kg_rag.senses.knowledge.contextual.ContextualSenses.bridge_cosines`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from kg_rag.model import Candidate, SelectionRequest, SenseEvidence
from kg_rag.senses.knowledge.config import PosCues
from kg_rag.text.analyse import gloss_words
from kg_rag.text.hebrew_affixes import medial, split_affixes, split_weak
from kg_rag.text.normalise import base_language, match_key

#: the parts of speech the affixes speak for; every other one (preposition, pronoun…) is "other"
KINDS = ("noun", "verb", "adjective", "other")
_IMPERFECT = "יתאנ"          # preformatives of the prefix conjugation
_PROCLITICS = ("", "ש", "ה", "ב", "כ", "ל", "מ")
#: plural endings, and the possessive suffixes of nouns (``י`` my, ``יו`` his, ``יהם`` their, …)
_OBJECT_PRONOUNS = frozenset("לו לה לך לי להם להן לנו לכם בו בה בם בי".split())
_NOUN_SUFFIXES = frozenset("ים ות י יו יה יך יכם יהם ינו ותי ותיו ותם".split())
#: the endings a word with the article can have: none, plural, feminine (a noun with a
#: pronominal suffix, or a verb with a conjugation suffix, never takes the article)
_ARTICLE_ENDINGS = frozenset(("", "ים", "ות", "ה", "ת", "ם", "ן"))


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


def hebrew_pos_scores(word: str, lemma: str, cues: PosCues, before: str | None = None,
                      after: str | None = None) -> dict[str, float]:
    """Log-odds per part of speech of the Hebrew ``word`` read as ``lemma``, from its affixes
    and the words around it (``before`` / ``after``: the previous / next word, "" at the edge
    of the text, None when unknown); set by hand from Hebrew grammar, strengths
    :class:`PosCues`. The words around:

    * the object marker ``את`` / ``ואת`` before: noun, strong; ``כל`` / ``וכל`` (all) before:
      noun, medium;
    * a negation (``לא``, ``ולא``) before: verb, medium; ``אשר`` (which), ``כי`` (that),
      ``אם`` (if) before: verb, weak; the first word of a clause (verb-first word order): verb,
      weak;
    * ``את`` after (verb + object) or a pronoun with ``ל`` / ``ב`` after (``לו``, ``להם``,
      ``בם``): verb, weak (``את``: medium).

    The affixes:

    * ``ו`` + ``י ת א נ`` before the lemma (the narrative past, *wayyiqtol*): verb, strong;
    * ``י ת א נ`` right before the lemma, after at most one proclitic: verb, medium;
    * the article ``ה`` right before the lemma (alone or after ``ו ש מ``): noun, medium;
      adjective, weak;
    * ``ב`` or ``כ`` alone before the lemma: noun, weak (an infinitive after them is a verb);
    * a plural ending (``ים`` / ``ות``) or a possessive suffix (``י`` / ``יו`` / ``יהם`` …) after
      it: noun, weak; ``תי`` / ``תם`` / ``תן`` (the suffix conjugation) or the object suffix
      ``ני`` after it: verb, medium; ``ו`` alone (they did / will do): verb, weak.

    And where the article cannot be, or an inflection only a verb has (2026-12-07):

    * ``ה`` after ``ב`` / ``כ`` / ``ל`` (``להבזות``): the article is not written after these
      prepositions, so the ``ה`` is a verb stem's (infinitive of a derived stem): verb, strong;
    * ``המ`` before the lemma: the article and a participle's ``מ`` (``המחכים``): verb, medium;
    * ``ה`` (alone or after ``ו ש מ``) with a pronominal or conjugation suffix (``והשבתי``): no
      article takes those, so the ``ה`` is a verb stem's: verb, medium, instead of the article's
      noun cue;
    * ``ו`` after the first of three radicals (``שומר``, ``היוצרים``): the active participle:
      verb, medium;
    * a weak radical missing (:func:`~kg_rag.text.hebrew_affixes.split_weak`: ``ויקץ`` of
      ``קוץ``, ``ותשק`` of ``נשק``): verb, medium;
    * the previous word has the article and this one too (``הסוסים השחרים``, ``הדברים האלה``):
      an attribute agreeing in definiteness — adjective, demonstrative or participle: each
      medium.
    """
    score = dict.fromkeys(KINDS, 0.0)
    if before is not None:
        if before in ("את", "ואת"):
            score["noun"] += cues.strong
        elif before in ("כל", "וכל"):
            score["noun"] += cues.medium
        elif before in ("לא", "ולא"):
            score["verb"] += cues.medium
        elif before in ("אשר", "כי", "אם", ""):
            score["verb"] += cues.weak
    if after is not None:
        if after == "את":
            score["verb"] += cues.medium
        elif after in _OBJECT_PRONOUNS:
            score["verb"] += cues.weak
    form, lem = match_key(word), match_key(lemma)
    if before and len(before) > 2 and before.startswith("ה") and form.startswith(("ה", "וה")):
        for k in ("adjective", "other", "verb"):
            score[k] += cues.medium
    split = split_affixes(form, lem)
    if split is None:
        split = split_weak(form, lem)
        if split is not None:
            score["verb"] += cues.medium
    if split is None:
        return score
    pre, stem, suf = split
    if pre.startswith("ו"):
        if len(pre) == 2 and pre[1] in _IMPERFECT:
            score["verb"] += cues.strong
        pre = pre[1:]
    if pre[-1:] and pre[-1] in _IMPERFECT and pre[:-1] in _PROCLITICS:
        score["verb"] += cues.medium
    elif pre in ("לה", "בה", "כה"):
        score["verb"] += cues.strong
    elif pre in ("המ", "שהמ"):
        score["verb"] += cues.medium
    elif pre in ("ה", "שה", "מה") and suf not in _ARTICLE_ENDINGS:
        score["verb"] += cues.medium
    elif pre in ("ה", "שה", "מה"):
        score["noun"] += cues.medium
        score["adjective"] += cues.weak
    elif pre in ("ב", "כ"):
        score["noun"] += cues.weak
    root = medial(lem)
    if len(root) == 3 and len(stem) == 4 and stem[1] == "ו" and medial(stem[0] + stem[2:]) == root:
        score["verb"] += cues.medium
    if suf in _NOUN_SUFFIXES:
        score["noun"] += cues.weak
    elif suf in ("תי", "תם", "תן") or suf.endswith("ני"):
        score["verb"] += cues.medium
    elif suf == "ו":
        score["verb"] += cues.weak
    return score


def pos_fit(req: SelectionRequest, cues: PosCues,
            elsewhere: Callable[[SelectionRequest], Mapping[str, int]] | None = None) -> list[float] | None:
    """Per candidate, log P(its part of speech | the word's affixes), plus, with ``elsewhere``
    (the parts of speech, :func:`kind` → how many, of the written form's readings in the
    store's other lexicons of the language), log P(its part of speech | those readings),
    add-one smoothed over the candidates' parts of speech — OMW's and Wiktionary's Hebrew give
    the bare form רק only as an adverb, where the spelling says nothing. None unless the
    candidates mix parts of speech and the mention is Hebrew."""
    cands = req.mention.candidates
    kinds = {_kind(c.pos) for c in cands}
    if len(kinds) < 2 or base_language(req.mention.lang) != "he":
        return None
    other = elsewhere(req) if elsewhere is not None else {}
    seen = sum(other.get(k, 0) for k in kinds)
    ctx, m = req.context, req.mention
    inside = 0 <= m.start <= m.end <= len(ctx) and ctx[m.start:m.end] == m.text
    left = ctx[:m.start].split() if inside else None
    right = ctx[m.end:].split() if inside else None
    before = None if left is None else match_key(left[-1]) if left else ""
    after = None if right is None else match_key(right[0]) if right else ""
    out = []
    for c in cands:
        score = hebrew_pos_scores(m.text, c.lemma or m.text, cues, before, after)
        z = math.log(sum(math.exp(score[k]) for k in kinds))
        kind = _kind(c.pos)
        out.append(score[kind] - z + (math.log((1 + other.get(kind, 0)) / (len(kinds) + seen)) if seen else 0.0))
    return out


def kind(pos: str | None) -> str:
    """The part of speech as :func:`pos_fit` compares them: noun, verb, adjective or other."""
    return _kind(pos)


__all__ = ["KINDS", "hebrew_pos_scores", "kind", "pos_fit", "richness_prior", "sense_only"]
