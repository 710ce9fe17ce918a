"""Sense priors of the knowledge-based selector.

* English (and any lexicon whose entries list their senses by frequency, ``kgr:senseRank``): the
  rank prior ``log p(c) = -alpha * log(rank)``, applied in :func:`kg_rag.senses.knowledge.combine`;
* another language (OMW lists an entry's senses in synset order, so its first sense is a random
  one): the English frequency of the shared ILI concept, estimated from the dictionary alone.
  A concept's frequency is ``sum over its English lemmas l of count(l) * rank_l(c) ** -XL_RANK``:
  the lemma's frequency split over its senses by a steep Zipf decay of the WordNet sense order.
  ``count(l)`` is the number of concepts whose definitions and examples use ``l`` (+1): the
  dictionary's own text is the only corpus we have, and frequent words are used more in it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .graph import KnowledgeBase

#: chosen on semeval2013-dev es/fr (README "Evaluation"): English prior alone 67.6 / 64.9 F1
#: (with polysemy ** 0.5 instead of the gloss count: 54.7 / 43.5)
XL_RANK = 3.0


def english_frequency(kb: KnowledgeBase, node: int) -> float:
    """The dictionary-estimated English frequency of a concept (0 when it has no English lemma)."""
    f = 0.0
    for key in kb.lemmas_of(node):
        if not key.startswith("en:"):
            continue
        lemma = key[3:]
        rank = min(r for n, r in kb.concepts_of("en", lemma) if n == node)
        f += (kb.count(lemma) + 1) * max(rank, 1) ** -XL_RANK
    return f


def english_prior(kb: KnowledgeBase, nodes: Sequence[int | None]) -> list[float]:
    """Log English-frequency proxy of each candidate concept (unknown concepts: ``log 0.1``)."""
    return [math.log((english_frequency(kb, n) if n is not None else 0.0) + 0.1) for n in nodes]
