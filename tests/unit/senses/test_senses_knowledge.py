"""The knowledge-based selector and the baselines on a tiny WordNet-like fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.base import SenseSelector
from kg_rag.senses.baselines import FirstSenseSelector, RandomSelector
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig, Weights
from kg_rag.senses.knowledge.graph import knowledge_base
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import (
    ILI,
    bank_candidates,
    bd_candidates,
    fruit_candidates,
    load_fixture,
)


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")   # the knowledge base's disk cache, per test
    return load_fixture(mem_store)


def _mention(text: str, lang: str, cands: tuple[Candidate, ...], start: int = 0) -> Mention:
    return Mention(start, start + len(text), text, lang, cands)


def _request(store: EmbeddedStore, context: str, lang: str, cands: tuple[Candidate, ...],
             word: str, others: tuple[Mention, ...] = ()) -> SelectionRequest:
    start = context.index(word)
    return SelectionRequest(_mention(word, lang, cands, start), context, lang,
                            fetch_evidence(store, cands), others)


def test_selectors_implement_the_interface(store: EmbeddedStore) -> None:
    for sel in (KnowledgeSelector(store), FirstSenseSelector(), RandomSelector(3)):
        assert isinstance(sel, SenseSelector)
    assert KnowledgeSelector(store).agent.name == "knowledge"
    assert FirstSenseSelector().agent.name == "first-sense"


def test_context_picks_the_river_bank(store: EmbeddedStore) -> None:
    river = _mention("river", "en", (Candidate(ILI + "i3", lemma="river", lang="en", rank=1),), 29)
    req = _request(store, "they pulled the canoe up on the river bank", "en", bank_candidates(),
                   "bank", (river,))
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen is not None and sel.chosen.concept == ILI + "i2"
    assert 0.0 <= sel.confidence <= 1.0 and sel.confidence > 0.3
    scores = dict(sel.scores)
    assert set(scores) == {c.id for c in bank_candidates()}
    assert scores[bank_candidates()[1].id] > scores[bank_candidates()[0].id]


def test_context_picks_the_money_bank(store: EmbeddedStore) -> None:
    money = _mention("money", "en", (Candidate(ILI + "i4", lemma="money", lang="en", rank=1),), 10)
    req = _request(store, "she lent money to the bank", "en", bank_candidates(), "bank", (money,))
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen is not None and sel.chosen.concept == ILI + "i1"


def test_prior_decides_without_evidence(store: EmbeddedStore) -> None:
    req = _request(store, "look at the bank", "en", bank_candidates(), "bank")
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen == bank_candidates()[0]
    assert 0.0 <= sel.confidence <= 1.0
    # reversed candidate order: the sense rank still decides, not the position
    rev = tuple(reversed(bank_candidates()))
    req2 = SelectionRequest(_mention("bank", "en", rev, 12), "look at the bank", "en",
                            fetch_evidence(store, rev))
    [sel2] = KnowledgeSelector(store).select([req2])
    assert sel2.chosen == bank_candidates()[0]


def test_cross_lingual_hebrew_mention_with_english_glosses(store: EmbeddedStore) -> None:
    """הפירות העמיסו על הבדים: the Hebrew senses have no definitions; the English glosses and the
    graph reached through the ILI concepts choose 'branch' over 'fabric' (the prior is switched
    off here: the fixture's English lemmas give no frequency difference worth testing)."""
    flat = KnowledgeSelectorConfig(xl=Weights(alpha=0.0, ppr=0.3, lesk=0.01))
    text = "הפירות העמיסו על הבדים"
    fruit = _mention("הפירות", "he", fruit_candidates(), 0)
    req = _request(store, text, "he", bd_candidates(), "הבדים", (fruit,))
    assert all(not d.lang or d.lang == "en" for ev in req.evidence for d in ev.definitions)
    [sel] = KnowledgeSelector(store, flat).select([req])
    assert sel.chosen is not None and sel.chosen.concept == ILI + "i8"
    # the context word alone (lemmatised, looked up in the lexicon) is evidence enough
    found = _request(store, text, "he", bd_candidates(), "הבדים")
    [sel3] = KnowledgeSelector(store, flat).select([found])
    assert sel3.chosen is not None and sel3.chosen.concept == ILI + "i8"
    # without any fruit: a tie, the lexicon's first sense
    alone = _request(store, "הם קנו הבדים", "he", bd_candidates(), "הבדים")
    [sel2] = KnowledgeSelector(store, flat).select([alone])
    assert sel2.chosen is not None and sel2.chosen.concept == ILI + "i7"


def test_no_candidates_is_unresolved_not_an_error(store: EmbeddedStore) -> None:
    req = SelectionRequest(_mention("zebra", "en", ()), "a zebra", "en", ())
    for sel in (KnowledgeSelector(store), FirstSenseSelector(), RandomSelector(0)):
        [out] = sel.select([req])
        assert out.chosen is None and out.reason and out.confidence == 0.0


def test_single_candidate_is_certain(store: EmbeddedStore) -> None:
    one = bank_candidates()[:1]
    req = _request(store, "the bank", "en", one, "bank")
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen == one[0] and sel.confidence == 1.0


def test_unknown_concept_still_decided_by_prior(store: EmbeddedStore) -> None:
    cands = (Candidate("http://example.org/x1", lemma="x", rank=2),
             Candidate("http://example.org/x2", lemma="x", rank=1))
    req = SelectionRequest(_mention("x", "en", cands), "x marks the spot", "en", fetch_evidence(store, cands))
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen == cands[1]


def test_baselines(store: EmbeddedStore) -> None:
    req = _request(store, "they pulled the canoe up on the river bank", "en", bank_candidates(), "bank")
    [first] = FirstSenseSelector().select([req])
    assert first.chosen == bank_candidates()[0]
    picks = {RandomSelector(seed).select([req])[0].chosen for seed in range(20)}
    assert picks == set(bank_candidates())
    a = [s.chosen for s in RandomSelector(7).select([req] * 10)]
    b = [s.chosen for s in RandomSelector(7).select([req] * 10)]
    assert a == b


def test_knowledge_base_is_cached_on_disk(store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    from kg_rag.senses.knowledge import graph

    derived = Derived.of(store, tmp_path)   # the cache folder (Settings.cache_dir) of the store
    kb = knowledge_base(store)
    assert not list(tmp_path.glob("wsd-*.npz"))  # too small to be worth a file
    derived.invalidate()
    monkeypatch.setattr(graph, "DISK_CACHE_MIN_NODES", 1)
    kb = knowledge_base(store)
    files = list(tmp_path.glob("wsd-*.npz"))
    assert len(files) == 1
    assert "gloss" in kb.rel_names and "hypernym" in kb.rel_names
    other = load_fixture(EmbeddedStore(":memory:"))
    Derived.of(other, tmp_path)
    kb2 = knowledge_base(other)   # same catalog → read from disk
    assert kb2.nodes == kb.nodes and (kb2.edge_src == kb.edge_src).all()
    assert kb.concepts_of("he", "בד") == [(kb.index[ILI + "i7"], 1), (kb.index[ILI + "i8"], 2)]


def test_confidence_is_calibrated_to_the_dictionary(store: EmbeddedStore) -> None:
    """A small dictionary's confidence is the margin between the two best readings; on a
    WordNet-scale one (``informed``) the squared margin (retrieval uses the scores, not this)."""
    from dataclasses import replace

    money = _mention("money", "en", (Candidate(ILI + "i4", lemma="money", lang="en", rank=1),), 10)
    req = _request(store, "she lent money to the bank", "en", bank_candidates(), "bank", (money,))
    sel = KnowledgeSelector(store)
    wordnet_power = sel.config.margin_power(True)
    assert wordnet_power == 2.0
    [comp] = sel.components([req])
    assert comp is not None and not comp.informed   # the fixture is a small dictionary
    small = sel.decide(req, comp)
    p = sorted((s for _, s in small.scores), reverse=True)
    margin = p[0] - p[1]
    assert small.confidence == pytest.approx(margin, abs=1e-5)
    big = sel.decide(req, replace(comp, informed=True))
    # among WordNet-scale candidates the probabilities are also tempered by the regime's
    # sharpness (fitted on WordNet decisions): the same choice, p ** s renormalised
    s = sel.config.english.sharpness
    z = sum(q ** s for _, q in small.scores)
    assert big.chosen == small.chosen
    assert [b for _, b in big.scores] == pytest.approx([q ** s / z for _, q in small.scores], abs=1e-5)
    pb = sorted((q for _, q in big.scores), reverse=True)
    assert big.confidence == pytest.approx((pb[0] - pb[1]) ** 2, abs=1e-5)


def test_sharpness_tempers_the_probabilities_not_the_choice(store: EmbeddedStore) -> None:
    """``Weights.sharpness`` is an inverse softmax temperature: each probability becomes
    ``p ** s`` renormalised — flatter below 1 — and the chosen sense stays the same."""
    import math
    from dataclasses import replace

    money = _mention("money", "en", (Candidate(ILI + "i4", lemma="money", lang="en", rank=1),), 10)
    req = _request(store, "she lent money to the bank", "en", bank_candidates(), "bank", (money,))
    sharp = KnowledgeSelector(store)
    cfg = sharp.config
    soft = KnowledgeSelector(store, replace(cfg, english=replace(cfg.english, sharpness=0.25)))
    assert soft.agent.version != sharp.agent.version  # another calibration is another agent
    [small] = sharp.components([req])
    assert small is not None and not small.informed
    # a small dictionary's probabilities are not tempered (the sharpness is fitted on WordNet)
    assert sharp.decide(req, small).scores == soft.decide(req, small).scores
    comp = replace(small, informed=True)
    a, b = sharp.decide(req, comp), soft.decide(req, comp)
    assert a.chosen == b.chosen
    pa, pb = dict(a.scores), dict(b.scores)
    assert max(pb.values()) < max(pa.values())
    e = 0.25 / cfg.english.sharpness
    z = sum(v ** e for v in pa.values())
    for k, v in pa.items():
        assert pb[k] == pytest.approx(v ** e / z, abs=1e-4)
    assert math.isclose(sum(pb.values()), 1.0, abs_tol=1e-4)



def test_two_senses_of_one_concept_are_one_reading_when_choosing() -> None:
    """*Bank* in a question that may be German or English: the German and the English dictionary
    each have a sense of the bank (money), one has the bench, the other the river bank. With no
    context all four senses are equally likely, so the bank's two hold half of the probability:
    it is chosen, with the margin over the next concept (0.5 − 0.25), not over its own twin."""
    from kg_rag import KnowledgeGraph
    from kg_rag.resources import resource_path
    from kg_rag.store import EmbeddedStore

    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    demo = resource_path("demo")
    kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    (report,) = kg.annotate("Bank", wsd="knowledge", record_question=False)
    concepts = [c.concept for c in report.mention.candidates]
    bank = "https://w3id.org/kg-rag/demo/concept/bank"
    assert concepts.count(bank) == 2 and len(set(concepts)) == 3
    sel = report.selection
    assert sel is not None and sel.chosen is not None
    assert sel.chosen.concept == bank
    assert abs(sel.confidence - 0.25) < 1e-6
