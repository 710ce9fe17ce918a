"""Part of speech from the tokens around a mention (no tagger: the annotator has none).

Raw text gives a word like "report" or "runs" candidates in several parts of speech. The words
around it say which one is meant: after a determiner, possessive, preposition or number it is a
noun; after a modal, ``to``, a subject pronoun or an auxiliary it is a verb; a determiner or an
object pronoun after it makes a verb, ``of`` after it a noun; a form ending in ``-ed`` of a
shorter lemma is a verb (or adjective), ``-ly`` an adverb. :func:`pos_distribution` turns those
cues into a probability per part of speech; :func:`pos_evidence` gives each candidate the log of
its part of speech's probability, which the knowledge selector adds with weight ``w.pos``
(:class:`~kg_rag.senses.knowledge.config.Weights`). Mentions whose candidates share one part of
speech get none. The cues were set by hand, their strengths are a
:class:`~kg_rag.senses.knowledge.config.PosCues`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kg_rag.model import Candidate, SelectionRequest
from kg_rag.senses.knowledge.config import PosCues
from kg_rag.text import english
from kg_rag.text.english import DETERMINERS, OBJECT_PRONOUNS, PREPOSITIONS, QUOTES, skippable

POS = ("noun", "verb", "adjective", "adverb")

_MODALS = frozenset("can could will would shall should may might must 'll 'd cannot ca wo".split())
_SUBJECTS = frozenset("i we they he she who you".split())
_DO = frozenset("do does did don't doesn't didn't".split())
_HAVE = frozenset("have has had having 've 's".split())
_BE = frozenset("be is are was were been being 're 'm am 's".split())
_POSSESSIVES = frozenset("my your his its our their 's".split())
_INTENSIFIERS = frozenset("very so too more most less least quite rather how".split())
_FINITE = frozenset("is are was were has have had will would can could should may might must "
                    "does did".split())
_FREQUENCY = frozenset("seldom rarely sometimes usually almost hardly".split())
_FUNCTION = frozenset("and or but nor not than as if so because when while where whether".split())
_NUMBERS = frozenset("two three four five six seven eight nine ten dozen hundred thousand million "
                     "billion first second third last next".split())
_NOUN_LEFT = (DETERMINERS - {"that", "what", "which", "all", "both"}) | _POSSESSIVES | _NUMBERS
_RELATIVES = frozenset("that which who".split())
_SENTENCE_START = frozenset(". ! ? : ;".split())
_PLURALS = ("men", "ren", "ves", "ice", "eet", "eeth", "ople", "ae", "i")
_ADJ_SUFFIXES = ("al", "ous", "ive", "ful", "less", "able", "ible", "ic", "ary", "ish", "ant", "ent")


def _left(context: str, start: int) -> tuple[str, str]:
    """The previous token (adverbs skipped) and the one right before the mention."""
    toks = english.before(context, start, 5)
    adjacent = toks[-1] if toks else ""
    j = len(toks) - 1
    while j >= 0 and (skippable(toks[j]) or toks[j] in _FREQUENCY) and toks[j] not in _INTENSIFIERS:
        j -= 1
    return (toks[j] if j >= 0 else ""), adjacent


def _right(context: str, end: int) -> tuple[str, str]:
    toks = english.after(context, end, 4)
    return (toks[0] if toks else ""), (toks[1] if len(toks) > 1 else "")


def _inflected(surface: str, lemma: str) -> str:
    """How ``surface`` inflects ``lemma``: ``ed``, ``ing``, ``s``, ``base`` or ``other``."""
    s, b = (surface.lower().split(" ") or [""])[0], (lemma.lower().split(" ") or [""])[0]
    if not b or s == b:
        return "base"
    if s.endswith("ing") and not b.endswith("ing"):
        return "ing"
    if s.endswith(("ed", "en")) or (s.endswith("d") and b.endswith("e")):
        return "ed"
    if s.endswith("s") and (s[:-1] == b or s[:-2] == b or s[:-3] + "y" == b):
        return "s"
    return "other"


def pos_distribution(context: str, start: int, end: int, cues: PosCues, lemma: str = "") -> dict[str, float]:
    """P(part of speech) of the word at ``context[start:end]`` (lemma: its base form, if known)."""
    strong, medium, weak = cues.strong, cues.medium, cues.weak
    score = dict.fromkeys(POS, 0.0)
    surface = context[start:end] if 0 <= start <= end <= len(context) else ""
    word = surface.lower()
    before, adjacent = _left(context, start)
    after, after2 = _right(context, end)
    form = _inflected(word, lemma or word)

    def add(pos: str, v: float) -> None:
        score[pos] += v

    # --- left ------------------------------------------------------------------------------
    if before in _NOUN_LEFT or (before[:1].isdigit()):
        add("noun", strong)
        add("adjective", medium)
        if form == "ing":
            add("verb", weak)   # "the running of", "a meeting" — still mostly nouns
    elif before in PREPOSITIONS:
        if form == "ing":
            add("verb", strong)  # "by using", "of running"
        else:
            add("noun", strong)
            add("adjective", weak)
    elif before == "to":
        add("verb" if form == "base" else "noun", medium)
    elif before in _MODALS or before in _DO:
        add("verb", strong)
    elif before in _SUBJECTS:
        add("verb", strong)
    elif before == "it" or (before in _RELATIVES and form != "base"):
        add("verb", medium)
    elif before in _RELATIVES:
        add("verb", weak)
    elif before in _HAVE and form == "ed":
        add("verb", strong)
    elif before in _BE:
        if form in ("ing", "ed", "other"):
            add("verb", strong)
            add("adjective", weak)
        else:
            add("adjective", medium)
            add("noun", weak)
    elif adjacent in _INTENSIFIERS:
        add("adjective", medium)
        add("adverb", weak)
    elif before.endswith(_ADJ_SUFFIXES) and len(before) > 4:
        add("noun", weak)
    elif form == "base" and (not before or before in _SENTENCE_START):
        add("verb", weak)  # imperative
    elif form == "base" and before.endswith("s") and not before.endswith("ss") and len(before) > 3:
        add("verb", weak)  # after a plural subject: "thieves walk"
    elif form == "base" and adjacent != before:
        add("verb", weak)  # an adverb between: "people not only lack", "flights always occur"
    elif form == "base" and before.isalpha() and before not in _FUNCTION:
        add("noun", medium)  # after a singular noun or an adjective: "jail sentence", "major support"
    # --- right -----------------------------------------------------------------------------
    if after in DETERMINERS - {"that", "what", "which"} or after in OBJECT_PRONOUNS - {"one", "it"}:
        add("verb", medium)
    elif after in ("of", "'s"):
        add("noun", medium)
    elif after in _FINITE and before not in _SUBJECTS:
        add("noun", medium)  # the subject's head: "the report was"
    elif after == "to" and after2 and after2 not in DETERMINERS:
        add("verb", weak)
    if surface[:1].isupper() and adjacent and adjacent not in _SENTENCE_START | QUOTES:
        add("noun", medium)  # a capital inside a sentence: a name
    # --- morphology ------------------------------------------------------------------------
    if form == "ed":
        add("verb", medium)
        add("adjective", weak)
    elif form == "ing":
        add("verb", weak)
    elif form == "other" and word.endswith(_PLURALS):
        add("noun", weak)
    elif form == "other":
        add("verb", medium)  # irregular: "found", "made", "came" (irregular plurals are rarer)
    elif form == "s":
        add("noun", weak)
    if word.endswith("ly") and len(word) > 4:
        add("adverb", strong)
    m = max(score.values())
    z = sum(math.exp(v - m) for v in score.values())
    return {p: math.exp(v - m) / z for p, v in score.items()}


def _norm(pos: str | None) -> str:
    p = pos or ""
    return "adjective" if p.startswith("adjective") else p


def mixed(cands: Sequence[Candidate]) -> bool:
    """English candidates in more than one part of speech."""
    kinds = {_norm(c.pos) for c in cands}
    return len(kinds) > 1 and kinds <= set(POS) and all(c.lang in ("en", "") for c in cands)


def pos_evidence(req: SelectionRequest, cues: PosCues) -> list[float] | None:
    """Per candidate, log P(its part of speech | context) — None unless :func:`mixed`."""
    cands = req.mention.candidates
    if not mixed(cands):
        return None
    kinds = {_norm(c.pos) for c in cands}
    present = [p for p in POS if p in kinds]  # in a fixed order: a float sum over a set of strings
    out = []                                   # would depend on the process's hash seed
    cache: dict[str, dict[str, float]] = {}
    for c in cands:
        lemma = c.lemma or req.mention.text
        dist = cache.get(lemma)
        if dist is None:
            dist = cache[lemma] = pos_distribution(req.context, req.mention.start, req.mention.end, cues, lemma)
        z = sum(dist[p] for p in present)
        out.append(math.log(dist[_norm(c.pos)] / z))
    return out
