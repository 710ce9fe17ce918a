"""The cross-lingual prior: a concept's English frequency estimated from the dictionary itself."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig, PriorConfig
from kg_rag.senses.knowledge.graph import KnowledgeBase, knowledge_base
from kg_rag.senses.knowledge.prior import (
    english_frequencies,
    english_frequency,
    english_prior,
    informed,
)
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import ILI, bd_candidates, fruit_candidates, load_fixture

#: the fixture's glosses taken as a corpus (as a WordNet-scale dictionary's)
CORPUS = PriorConfig(min_corpus=0)
SMALL = PriorConfig()
WORDNET_SCALE = KnowledgeSelectorConfig(prior=CORPUS)


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")   # the knowledge base's disk cache, per test
    return load_fixture(mem_store)


def test_english_frequency_counts_gloss_use_and_sense_rank(store: EmbeddedStore) -> None:
    kb = knowledge_base(store, disk_cache=False)
    # 'branch' (first sense of i8) is used in the definition of i10 ("... a trunk and branches");
    # 'fabric' (first sense of i7) in no definition
    assert kb.count("branch") == 1 and kb.count("fabric") == 0
    assert english_frequency(kb, kb.index[ILI + "i8"], CORPUS) == 2.0
    assert english_frequency(kb, kb.index[ILI + "i7"], CORPUS) == 1.0
    # 'bank' has two senses: the second gets (count + 1) * 2 ** -xl_rank
    second = english_frequency(kb, kb.index[ILI + "i2"], CORPUS)
    assert second == pytest.approx((kb.count("bank") + 1) * 2 ** -CORPUS.xl_rank)
    steeper = PriorConfig(min_corpus=0, xl_rank=CORPUS.xl_rank + 1)
    assert english_frequency(kb, kb.index[ILI + "i2"], steeper) == pytest.approx(second / 2)
    assert english_prior(kb, [None], CORPUS) == [pytest.approx(math.log(CORPUS.unknown))]


def test_the_frequency_table_is_built_once_per_parameters(store: EmbeddedStore) -> None:
    """The table over every concept is cached with the knowledge base under a key naming its
    parameters (it was once stored under a lemma's key and rebuilt for every mention: 2.4 s per
    instance on semeval2013-dev es with OEWN)."""
    kb = knowledge_base(store, disk_cache=False)
    first = english_frequencies(kb, CORPUS)
    assert english_frequencies(kb, CORPUS) is first
    assert english_frequencies(kb, PriorConfig(min_corpus=0, xl_rank=CORPUS.xl_rank + 1)) is not first


def test_a_small_dictionary_gives_a_flat_prior(store: EmbeddedStore) -> None:
    """A handful of glosses is no corpus: every concept with an English lemma weighs the same."""
    kb = knowledge_base(store, disk_cache=False)
    assert english_frequency(kb, kb.index[ILI + "i8"], SMALL) == english_frequency(kb, kb.index[ILI + "i7"], SMALL) \
        == 1.0


def test_hebrew_mention_without_context_follows_the_english_frequency(store: EmbeddedStore) -> None:
    text = "הם קנו הבדים"
    cands = bd_candidates()
    start = text.index("הבדים")
    req = SelectionRequest(Mention(start, start + 5, "הבדים", "he", cands), text, "he",
                           fetch_evidence(store, cands))
    [sel] = KnowledgeSelector(store, WORDNET_SCALE).select([req])
    # the Hebrew lexicon lists 'fabric' first, but its sense order is no frequency order
    assert sel.chosen is not None and sel.chosen.concept == ILI + "i8"
    assert sel.reason.startswith("prior")


def fruit_on_branches(store: EmbeddedStore) -> SelectionRequest:
    """בדים ('fabric' first in the Hebrew lexicon, or 'branches') after פירות ('fruit')."""
    text = "הפירות העמיסו על הבדים"
    fruit = Mention(0, 6, "הפירות", "he", fruit_candidates())
    cands = bd_candidates()
    start = text.index("הבדים")
    return SelectionRequest(Mention(start, start + 5, "הבדים", "he", cands), text, "he",
                            fetch_evidence(store, cands), (fruit,))


def test_context_still_counts_outside_english(store: EmbeddedStore) -> None:
    """The English-frequency prior is one signal: PPR and Lesk still run for a Hebrew mention."""
    req = fruit_on_branches(store)
    cands = req.mention.candidates
    sel = KnowledgeSelector(store)
    [comp] = sel.components([req])
    assert comp is not None and comp.has_seeds and comp.regime == "xl" and comp.en_prior is not None
    assert comp.ppr[1] > comp.ppr[0]  # the fruit's concept is a neighbour of 'branch'
    decided = sel.decide(req, comp)
    assert decided.reason == "prior+ppr+lesk" and decided.chosen == cands[1]


def test_a_dictionary_big_enough_for_the_prior_lets_it_decide(store: EmbeddedStore) -> None:
    """With an English-frequency estimate (OEWN-sized dictionaries) the prior decides and PPR is
    not run for mentions outside English; a small dictionary keeps the context weights."""
    req = fruit_on_branches(store)
    cands = req.mention.candidates
    sel = KnowledgeSelector(store, WORDNET_SCALE)
    [comp] = sel.components([req])
    assert comp is not None and comp.informed and comp.regime == "xl-freq"
    assert WORDNET_SCALE.xl_freq.ppr == 0 and comp.ppr == [0.0] * len(cands)  # PPR was not run
    decided = sel.decide(req, comp)
    assert decided.reason.startswith("prior+lesk")
    # the same knowledge base, the default (small-dictionary) threshold: the context regime
    [small] = KnowledgeSelector(store).components([req])
    assert small is not None and not small.informed and small.regime == "xl" and small.ppr != [0.0] * len(cands)


def test_a_thesaurus_beside_wordnet_keeps_its_own_regime(store: EmbeddedStore) -> None:
    """In a WordNet-scale store, candidates that are no WordNet concept (no ILI id: a thesaurus
    loaded beside WordNet) get no English-frequency prior and an uncalibrated margin — as in a
    store of their own — while WordNet candidates keep the frequency regime."""
    from dataclasses import replace

    text = "הם קנו הבדים"
    start = text.index("הבדים")
    sel = KnowledgeSelector(store, WORDNET_SCALE)

    def request(cands: tuple[Candidate, ...]) -> SelectionRequest:
        return SelectionRequest(Mention(start, start + 5, "הבדים", "he", cands), text, "he",
                                fetch_evidence(store, cands))

    wordnet = request(bd_candidates())
    thesaurus = request(tuple(replace(c, ili=None) for c in bd_candidates()))
    [cw, ct] = sel.components([wordnet, thesaurus])
    assert cw is not None and ct is not None
    assert cw.informed and cw.regime == "xl-freq"
    assert not ct.informed and ct.regime == "xl"
    assert cw.en_prior is not None and cw.en_prior[0] != cw.en_prior[1]   # 'branch' is used in a gloss
    assert ct.en_prior is not None and ct.en_prior[0] == ct.en_prior[1]   # flat
    chosen = sel.decide(wordnet, cw).chosen
    assert chosen is not None and chosen.concept == ILI + "i8"


def _frequencies_by_loop(kb: KnowledgeBase, config: PriorConfig) -> list[float]:
    """The estimate written as a loop over the English lemmas (the vectorised one must equal it)."""
    corpus = informed(kb, config)
    f = [0.0] * len(kb.nodes)
    for k, key in enumerate(kb.lemma_keys):
        if not key.startswith("en:"):
            continue
        a, b = kb.lemma_ptr[k], kb.lemma_ptr[k + 1]
        best: dict[int, int] = {}
        for n, r in zip(kb.lemma_nodes[a:b].tolist(), kb.lemma_ranks[a:b].tolist(), strict=True):
            best[n] = min(best.get(n, max(r, 1)), max(r, 1))
        for n, r in best.items():
            if corpus:
                f[n] += (kb.count(key[3:]) + 1) * float(r) ** -config.xl_rank
            else:
                f[n] = 1.0
    return f


@pytest.mark.parametrize("config", [CORPUS, SMALL], ids=["corpus", "small"])
def test_vectorised_frequencies_equal_the_loop(store: EmbeddedStore, config: PriorConfig) -> None:
    kb = knowledge_base(store, disk_cache=False)
    kb.cache.clear()
    got = english_frequencies(kb, config).tolist()
    assert got == _frequencies_by_loop(kb, config)
    assert any(v > 0 for v in got)
