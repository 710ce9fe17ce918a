"""Label matching between a sense's words and a thesaurus's labels, language by language.

A sense's words in a language are its entry's written forms (its own language) or the forms of
its translation equivalents and co-lexicalisations (other languages, and synonyms in its own).
They meet a concept's labels (pref, alt, hidden) at one of three tiers, weakest last:

* ``exact`` — the same match key (NFC, niqqud removed, case-folded: ``kg_rag.text.match_key``);
* ``lemma`` — the same key after lemmatising every word (``Banks`` ~ ``bank``, ``branding`` ~
  ``brand``), with the project's lemmatiser (``kg_rag.text.analyse.lemma``);
* ``stem`` — one single word a prefix of the other, both at least :data:`STEM_MIN` letters and
  at most :data:`STEM_EXTRA` apart (``restrain`` ~ ``restraint``): derivation, which thesauri
  (nouns) and dictionaries (verbs too) often differ by.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kg_rag.align.model import Label, ThesaurusConcept
from kg_rag.text.analyse import lemma

#: tier weights: how much of a full label agreement a match at that tier counts
TIER = {"exact": 1.0, "lemma": 0.8, "stem": 0.5}
#: a match with an alternative or hidden label counts this much of one with the preferred label
ALT = 0.8
STEM_MIN = 4
STEM_EXTRA = 3


def lemma_key(key: str, lang: str) -> str:
    return " ".join(lemma(w, lang) for w in key.split(" "))


def _stem_related(a: str, b: str) -> bool:
    if " " in a or " " in b or a == b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= STEM_MIN and long_.startswith(short) and len(long_) - len(short) <= STEM_EXTRA


@dataclass(frozen=True, slots=True)
class Hit:
    concept: str
    lang: str
    tier: str
    strength: float


class LabelIndex:
    """The labels of one thesaurus, indexed by language and key for the three tiers."""

    def __init__(self, concepts: Iterable[ThesaurusConcept]) -> None:
        self.exact: dict[tuple[str, str], list[Label]] = defaultdict(list)
        self.lemma: dict[tuple[str, str], list[Label]] = defaultdict(list)
        self.prefix: dict[tuple[str, str], list[Label]] = defaultdict(list)
        self.owner: dict[Label, set[str]] = defaultdict(set)
        for c in concepts:
            for lb in c.labels:
                self.owner[lb].add(c.concept)
                self.exact[(lb.lang, lb.key)].append(lb)
                self.lemma[(lb.lang, lemma_key(lb.key, lb.lang))].append(lb)
                if " " not in lb.key and len(lb.key) >= STEM_MIN:
                    self.prefix[(lb.lang, lb.key[:STEM_MIN])].append(lb)

    def hits(self, lang: str, keys: Iterable[str]) -> dict[str, Hit]:
        """The best match per concept of ``keys`` (words in ``lang``) with its labels."""
        best: dict[str, Hit] = {}

        def offer(lb: Label, tier: str) -> None:
            strength = TIER[tier] * (1.0 if lb.kind == "pref" else ALT)
            for c in self.owner[lb]:
                if c not in best or best[c].strength < strength:
                    best[c] = Hit(c, lang, tier, strength)

        for key in keys:
            for lb in self.exact.get((lang, key), ()):
                offer(lb, "exact")
            for lb in self.lemma.get((lang, lemma_key(key, lang)), ()):
                offer(lb, "lemma")
            if " " not in key and len(key) >= STEM_MIN:
                for lb in self.prefix.get((lang, key[:STEM_MIN]), ()):
                    if _stem_related(key, lb.key):
                        offer(lb, "stem")
        return best
