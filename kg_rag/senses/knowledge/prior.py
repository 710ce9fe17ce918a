"""Sense priors of the knowledge-based selector.

* English (and any lexicon whose entries list their senses by frequency, ``kgr:senseRank``): the
  rank prior ``log p(c) = -alpha * log(rank)``, applied in :func:`kg_rag.senses.knowledge.selector.combine`;
* another language's lexicon (OMW lists an entry's senses in synset order, so its first sense
  is a random one): the English frequency of the shared concept, estimated from the dictionary
  alone. A concept's frequency is ``sum over its English lemmas l of (count(l) + 1) *
  rank_l(c) ** -xl_rank``: the lemma's frequency split over its senses by a steep Zipf decay of
  the WordNet sense order. ``count(l)`` is the number of concepts whose definitions and examples
  use ``l``: the dictionary's own text is the only corpus we have, and frequent words are used
  more in it. A small dictionary's text is no corpus (in the demo, "wild" is used in 9 glosses
  and "wilderness" in 2) and its lemmas no frequency list (inflected forms are lemmas too):
  below ``min_corpus`` glossed concepts the prior is flat — the same for every candidate,
  whether or not the dictionary happens to have an English entry for it (it once gave such a
  concept 121 times the weight at α 2: German *Hahn* was the rooster, not the tap, at 0.99) — and the
  context decides.

The parameters are a :class:`~kg_rag.senses.knowledge.config.PriorConfig`; the tables derived
with them are cached with the knowledge base under a key that names them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from pyoxigraph import Literal

from kg_rag.senses.knowledge.config import PriorConfig
from kg_rag.senses.knowledge.graph import KnowledgeBase
from kg_rag.store import Store, Values


def informed(kb: KnowledgeBase, config: PriorConfig) -> bool:
    """Is the dictionary big enough for its gloss counts to estimate English frequencies?
    (Asked once per selection batch: cached with the knowledge base.)"""
    key = f"informed:{config.min_corpus}"
    hit = kb.cache.get(key)
    if isinstance(hit, bool):
        return hit
    out = int(np.count_nonzero(np.diff(kb.gloss_ptr))) >= config.min_corpus
    kb.cache[key] = out
    return out


def english_frequencies(kb: KnowledgeBase, config: PriorConfig) -> np.ndarray:
    """The dictionary-estimated English frequency of every concept (0: no English lemma)."""
    cache_key = f"english_frequencies:{config.xl_rank!r}:{config.min_corpus}"
    hit = kb.cache.get(cache_key)
    if isinstance(hit, np.ndarray):
        return hit
    corpus = informed(kb, config)
    f = np.zeros(len(kb.nodes), dtype=np.float64)
    english = [k for k, key in enumerate(kb.lemma_keys) if key.startswith("en:")]
    if not english:
        kb.cache[cache_key] = f
        return f
    ptr = kb.lemma_ptr
    starts, ends = ptr[english].astype(np.int64), ptr[np.asarray(english) + 1].astype(np.int64)
    sizes = ends - starts
    rows = np.repeat(np.arange(len(english)), sizes)   # English lemma number of each entry
    at = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]) \
        if len(english) else np.zeros(0, dtype=np.int64)
    nodes = kb.lemma_nodes[at].astype(np.int64)
    ranks = np.maximum(kb.lemma_ranks[at].astype(np.int64), 1)
    # a concept listed twice under one lemma counts once, with its best rank; the shares are
    # then added lemma by lemma, as a loop over the lemmas would add them
    order = np.lexsort((ranks, nodes, rows))
    rows, nodes, ranks = rows[order], nodes[order], ranks[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (rows[1:] != rows[:-1]) | (nodes[1:] != nodes[:-1])
    rows, nodes, ranks = rows[first], nodes[first], ranks[first]
    if not corpus:
        f[nodes] = 1.0
    else:
        counts = np.asarray([kb.count(kb.lemma_keys[k][3:]) + 1 for k in english], dtype=np.float64)
        share = counts[rows] * ranks.astype(np.float64) ** -config.xl_rank
        np.add.at(f, nodes, share)
    kb.cache[cache_key] = f
    return f


def english_frequency(kb: KnowledgeBase, node: int, config: PriorConfig) -> float:
    return float(english_frequencies(kb, config)[node])


def english_prior(kb: KnowledgeBase, nodes: Sequence[int | None], config: PriorConfig,
                  flat: bool = False) -> list[float]:
    """Log English-frequency proxy of each candidate concept (unknown concepts:
    ``log config.unknown``); ``flat``: the same for every candidate, as below
    ``config.min_corpus``."""
    f = english_frequencies(kb, config)
    def freq(n: int | None) -> float:
        if n is None:
            return 0.0
        return 1.0 if flat else float(f[n])
    return [math.log(freq(n) + config.unknown) for n in nodes]


def sense_frequencies(kb: KnowledgeBase, store: Store, keys: Iterable[str]) -> dict[str, int]:
    """WordNet sense key → corpus tag count for ``keys`` (``kgr:SenseFrequency``; a key without a
    record is left out): one query for the keys not asked before, the answers kept with the
    knowledge base (a loaded or dropped source gives a new one). A store without any count list
    is asked once (reading all 37,387 records at once took 3-6 s of a process's start)."""
    table = kb.cache.get("sense-frequencies")
    if not isinstance(table, dict):
        has = store.ask("ask-store-has-sense-frequencies")
        table = kb.cache["sense-frequencies"] = {} if has else None
    if table is None:
        return {}
    wanted = [k for k in dict.fromkeys(keys) if k]
    todo = [k for k in wanted if k not in table]
    for i in range(0, len(todo), 2000):
        chunk = todo[i : i + 2000]
        for k in chunk:
            table[k] = None
        for r in store.select("select-sense-frequencies",
                              values=Values.column("key", [Literal(k) for k in chunk])):
            try:
                n = int(r["count"].value)
            except ValueError:
                continue
            old = table.get(r["key"].value)
            table[r["key"].value] = n if old is None else max(old, n)
    return {k: table[k] for k in wanted if table.get(k) is not None}


def count_prior(keys: Sequence[str | None], ranks: Sequence[int], counts: dict[str, int]) -> list[float] | None:
    """Log of each candidate's smoothed relative corpus frequency, ``(count + b) / (N + 1)``: N the
    candidates' total count and one pseudo-count split over them as the rank prior splits it
    (``b ∝ 1 / rank``), so that unseen senses keep WordNet's order. None when no candidate has
    a count record (the rank prior then stands)."""
    if not any(k is not None and k in counts for k in keys):
        return None
    inv = [1.0 / max(r, 1) for r in ranks]
    z = sum(inv)
    c = [float(counts.get(k, 0)) if k is not None else 0.0 for k in keys]
    n = sum(c)
    return [math.log((ci + bi / z) / (n + 1.0)) for ci, bi in zip(c, inv, strict=True)]
