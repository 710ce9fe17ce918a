"""Score (sense, concept) pairs and choose one concept per sense.

For a sense ``s`` and a candidate concept ``c`` the evidence is added up in log-odds units:

    z(s, c) = Σ_languages label(L)  +  GLOSS · cos(s, c)  +  NEIGHBOUR · min(n(s, c), NEIGHBOUR_CAP)

* ``label(L)``, for every language L in which the sense has words (its own forms; its
  translation equivalents' forms): ``+AGREE × strength`` when they match a label of ``c`` in L
  (strength 1 for the same key and a preferred label, less for an alternative label, a lemma or
  a stem match: :mod:`kg_rag.align.labels`), ``−DISAGREE`` when ``c`` has labels in L and none
  matches, 0 when ``c`` has no label in L. Independent witnesses: each agreeing language
  multiplies the odds by e^AGREE ≈ 7, each contradicting one divides them by e^DISAGREE ≈ 2.7.
* ``cos(s, c)`` — IDF-weighted cosine of the sense's definition/example/note words and the
  concept's definition/scope-note/label words (:mod:`kg_rag.align.gloss`), in [0, 1].
* ``n(s, c)`` — neighbour concepts of ``c`` (broader, narrower, related) one of whose labels
  appears, all its words, in the sense's definitions or examples.

The score is a probability over the sense's candidates and "none of them" (weight e⁰ = 1):
``P(c | s) = e^z(c) / (1 + Σ_c' e^z(c'))``. One label agreement alone gives a lone candidate
0.88; two candidates with the same label evidence share it. Two senses of one word rarely
mean the same concept, so within a word concepts are assigned one-to-one, greedily by z. A
link's score is the smaller of two such probabilities: that of the concept among the sense's
candidates its siblings did not take (and none), and that of the sense among its word's senses
that have the concept as a candidate (and none) — a word whose two senses fit one label equally
well gets half for either, however well the label fits. A word is an entry's canonical form in
its language: homograph entries (noun and verb *brand*, noun and adjective *Spanish*) share it.

The constants were set before measuring, from the reasoning above, and not tuned on the demo's
links (docs/ALIGNMENT.md reports what they give).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kg_rag.align import labels as label_tiers
from kg_rag.align.gloss import Idf, bag, concept_bag, cosine, label_bag
from kg_rag.align.labels import LabelIndex
from kg_rag.align.model import DictSense, Evidence, Proposal, ThesaurusConcept
from kg_rag.text.normalise import match_key

AGREE = 2.0
DISAGREE = 1.0
GLOSS = 4.0
NEIGHBOUR = 1.0
NEIGHBOUR_CAP = 2
#: the method recorded with every link
METHOD = "labels+translations+gloss+neighbourhood"


def version() -> str:
    """A hash of every constant of the method (the aligner agent's version)."""
    parts = (AGREE, DISAGREE, GLOSS, NEIGHBOUR, NEIGHBOUR_CAP, sorted(label_tiers.TIER.items()),
             label_tiers.ALT, label_tiers.STEM_MIN, label_tiers.STEM_EXTRA)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Scored:
    concept: str
    z: float
    evidence: Evidence


def sense_words(d: DictSense, synonyms: bool = False) -> dict[str, frozenset[str]]:
    """The sense's words per language: its entry's forms and its equivalents (and, with
    ``synonyms``, its synonyms)."""
    words: dict[str, set[str]] = defaultdict(set)
    if d.lang:
        words[d.lang] |= d.keys
        if synonyms:
            words[d.lang] |= d.synonyms
    for lang, keys in d.equivalents:
        words[lang] |= keys
    return {lang: frozenset(ks) for lang, ks in words.items()}


class Scorer:
    """Everything about one thesaurus that scoring needs, computed once."""

    def __init__(self, concepts: Mapping[str, ThesaurusConcept]) -> None:
        self.concepts = concepts
        self.index = LabelIndex(concepts.values())
        self.bags = {c: concept_bag(tc) for c, tc in concepts.items()}
        self.idf = Idf(self.bags.values())
        self.norms = {b: self.idf.norm(b) for b in set(self.bags.values())}
        self.label_words = {c: [label_bag([(lb.lang, lb.key)]) for lb in tc.labels]
                            for c, tc in concepts.items()}
        self.languages = {c: tc.label_languages() for c, tc in concepts.items()}

    def index_hits_any(self, d: DictSense) -> bool:
        """Whether any word of the sense matches a label (before its texts are read)."""
        return any(self.index.hits(lang, keys) for lang, keys in sense_words(d).items())

    def candidates(self, d: DictSense, exclude: Iterable[str] = ()) -> list[Scored]:
        finding = sense_words(d)
        found_by = {c for lang, keys in finding.items() for c in self.index.hits(lang, keys)}
        words = sense_words(d, synonyms=True)
        hits = {lang: self.index.hits(lang, keys) for lang, keys in words.items()}
        found = sorted(found_by - set(exclude))
        sbag = bag(d.texts)
        out = []
        for c in found:
            label, agree, disagree, best = 0.0, [], [], ""
            for lang in sorted(words):
                hit = hits[lang].get(c)
                if hit is not None:
                    label += AGREE * hit.strength
                    agree.append(lang)
                    if not best or label_tiers.TIER[hit.tier] > label_tiers.TIER[best]:
                        best = hit.tier
                elif lang in self.languages[c]:
                    label -= DISAGREE
                    disagree.append(lang)
            cos = cosine(sbag, self.bags[c], self.idf, self.norms)
            n = sum(1 for nb in self.concepts[c].neighbours
                    if any(lw and lw <= sbag for lw in self.label_words.get(nb, ())))
            if best == "stem" and not cos and not n:
                continue  # a shared stem alone (ball ~ ballet, care ~ careers) is no evidence
            z = label + GLOSS * cos + NEIGHBOUR * min(n, NEIGHBOUR_CAP)
            out.append(Scored(c, z, Evidence(round(label, 4), round(cos, 4), n, tuple(agree),
                                             tuple(disagree), best)))
        return out


def _probability(z: float, others: Iterable[float]) -> float:
    top = max([z, 0.0, *others])
    num = math.exp(z - top)
    return num / (math.exp(-top) + sum(math.exp(o - top) for o in [z, *others]))


def word(d: DictSense) -> tuple[str, str]:
    """The word a sense belongs to: its entry's canonical form and language — homograph entries
    (the noun and the verb *brand*, the noun and the adjective *Spanish*) are one word."""
    return d.lang, match_key(d.lemma)


def assign(senses: Iterable[DictSense], scored: Mapping[str, list[Scored]]) -> list[Proposal]:
    """One concept per sense, one-to-one within each word (greedy by z)."""
    by_word: dict[tuple[str, str], list[DictSense]] = defaultdict(list)
    for d in senses:
        if scored.get(d.sense):
            by_word[word(d)].append(d)
    out = []
    for key in sorted(by_word):
        group = by_word[key]
        pairs = sorted(((s.z, d.sense, s.concept) for d in group for s in scored[d.sense]),
                       key=lambda t: (-t[0], t[1], t[2]))
        chosen: dict[str, str] = {}
        taken: set[str] = set()
        for _z, sense, concept in pairs:
            if sense not in chosen and concept not in taken:
                chosen[sense] = concept
                taken.add(concept)
        for d in group:
            if d.sense not in chosen:
                continue
            c = chosen[d.sense]
            siblings = taken - {c}
            pool = [s for s in scored[d.sense] if s.concept not in siblings]
            mine = next(s for s in pool if s.concept == c)
            row = _probability(mine.z, [s.z for s in pool if s.concept != c])
            rivals = [s.z for o in group if o.sense != d.sense for s in scored[o.sense] if s.concept == c]
            p = min(row, _probability(mine.z, rivals))
            out.append(Proposal(sense=d.sense, concept=c, score=round(p, 4), evidence=mine.evidence,
                                entry=d.entry, lemma=d.lemma, lang=d.lang, candidates=len(pool),
                                sense_concept=d.concept))
    return out


__all__ = ["METHOD", "Scored", "Scorer", "assign", "sense_words", "version"]
