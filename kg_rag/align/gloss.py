"""Word overlap between a sense's definitions/examples and a concept's definitions/scope notes:
content-word lemmas (``kg_rag.text.analyse.gloss_words``) tagged with their language, weighted by
inverse document frequency over the thesaurus's concepts, compared by cosine."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from kg_rag.align.model import ThesaurusConcept
from kg_rag.text.analyse import gloss_words

Bag = frozenset[tuple[str, str]]  # (language, lemma)


def bag(texts: Iterable[tuple[str, str]]) -> Bag:
    return frozenset((lang, w) for text, lang in texts for w in gloss_words(text, lang))


def label_bag(keys: Iterable[tuple[str, str]]) -> Bag:
    """The content words of labels or written forms: (language, key) pairs."""
    return frozenset((lang, w) for lang, key in keys for w in gloss_words(key, lang))


class Idf:
    """Inverse document frequency of words over a thesaurus's concepts (one document each)."""

    def __init__(self, docs: Iterable[Bag]) -> None:
        df: Counter[tuple[str, str]] = Counter()
        n = 0
        for d in docs:
            n += 1
            df.update(d)
        self.n = n
        self.df = df
        self._unseen = math.log((n + 1) / 1) + 1.0

    def __call__(self, word: tuple[str, str]) -> float:
        f = self.df.get(word)
        return self._unseen if f is None else math.log((self.n + 1) / (f + 1)) + 1.0

    def norm(self, b: Bag) -> float:
        return math.sqrt(sum(self(w) ** 2 for w in b))


def cosine(a: Bag, b: Bag, idf: Idf, norms: Mapping[Bag, float] | None = None) -> float:
    shared = a & b
    if not shared:
        return 0.0
    na = idf.norm(a)
    nb = norms[b] if norms is not None and b in norms else idf.norm(b)
    return sum(idf(w) ** 2 for w in shared) / (na * nb) if na and nb else 0.0


def concept_bag(c: ThesaurusConcept) -> Bag:
    """A concept's document: the words of its definitions, scope notes, examples and labels."""
    return bag(c.texts) | label_bag((lb.lang, lb.key) for lb in c.labels)
