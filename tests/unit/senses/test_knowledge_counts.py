"""The corpus-frequency prior: WordNet sense counts (cntlist.rev) loaded as RDF, joined to senses
by sense key, add-one smoothed per entry (English) or per mention through the ILI concept."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from kg_rag.derived import Derived
from kg_rag.errors import LoadError
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig, PriorConfig
from kg_rag.senses.knowledge.counts import SenseCounts, sense_counts
from kg_rag.senses.knowledge.prior import count_prior
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from loaders import list_sources, load_file
from tests.support.senses_fixture import EN, ILI, bank_candidates, bd_candidates, load_fixture

WORDNET_SCALE = KnowledgeSelectorConfig(prior=PriorConfig(min_corpus=0))
#: bank: 1 tag of the first (river) sense, 9 of the second (money); fabric: 30; a key no sense has
CNTLIST = "bank%1:14:00:: 1 1\nbank%1:17:01:: 2 9\nfabric%1:06:00:: 1 30\nnowhere%1:01:00:: 1 5\nzero%1:01:00:: 1 0\n"


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")
    return load_fixture(mem_store)


def with_counts(store: EmbeddedStore, folder: Path, text: str = CNTLIST) -> EmbeddedStore:
    path = folder / "wn30-cntlist.rev"
    path.write_text(text, encoding="utf-8")
    load_file(store, path)
    Derived.of(store).invalidate()
    return store


def english_request(store: EmbeddedStore, text: str = "the bank") -> SelectionRequest:
    cands = bank_candidates()
    start = text.index("bank")
    return SelectionRequest(Mention(start, start + 4, "bank", "en", cands), text, "en",
                            fetch_evidence(store, cands))


def test_the_counts_file_loads_as_records_keyed_by_sense_key(store: EmbeddedStore, tmp_path: Path) -> None:
    with_counts(store, tmp_path)
    [rec] = [r for r in list_sources(store) if r.kind == "sense-counts"]
    assert rec.triples == 4 * 3   # four keys with a count > 0, three triples each
    counts = sense_counts(store)
    assert counts.by_sense == {EN + "bank-n-1": 1, EN + "bank-n-2": 9, EN + "fabric-n-1": 30}
    assert counts.by_concept == {ILI + "i1": 1, ILI + "i2": 9, ILI + "i7": 30}


def test_a_malformed_counts_line_is_a_load_error_naming_it(store: EmbeddedStore, tmp_path: Path) -> None:
    path = tmp_path / "cntlist.rev"
    path.write_text("bank%1:14:00:: 1 1\nbank 2 x\n", encoding="utf-8")
    with pytest.raises(LoadError, match=r"cntlist.rev:2"):
        load_file(store, path)
    assert not sense_counts(store)  # nothing was written


def test_english_prior_is_the_add_one_smoothed_tag_frequency(store: EmbeddedStore, tmp_path: Path) -> None:
    with_counts(store, tmp_path)
    req = english_request(store)
    sel = KnowledgeSelector(store)
    [comp] = sel.components([req])
    assert comp is not None and comp.prior is not None
    # one pseudo-count split by the rank prior (1 : 1/2 → 2/3 : 1/3), over 10 tags + 1
    assert comp.prior == [pytest.approx(math.log((1 + 2 / 3) / 11)), pytest.approx(math.log((9 + 1 / 3) / 11))]
    [decided] = sel.select([req])
    assert decided.chosen is not None and decided.chosen.concept == ILI + "i2"  # the rank prior says i1
    # without the counts the same selector keeps the rank prior
    [plain] = KnowledgeSelector(load_fixture(EmbeddedStore(":memory:"))).select([english_request(store)])
    assert plain.chosen is not None and plain.chosen.concept == ILI + "i1"


def test_an_untagged_sense_keeps_a_share_by_its_rank() -> None:
    cands = bank_candidates() + (replace(bank_candidates()[1], sense=EN + "bank-n-3", rank=3, concept=ILI + "i3"),)
    base = [-math.log(r) for r in (1, 2, 3)]
    out = count_prior(cands, base, SenseCounts({EN + "bank-n-1": 4}, {ILI + "i1": 4}), False, PriorConfig())
    assert out is not None
    z = 1 + 1 / 2 + 1 / 3
    assert [math.exp(x) for x in out] == pytest.approx([(4 + 1 / z) / 5, (1 / 2 / z) / 5, (1 / 3 / z) / 5])
    assert sum(math.exp(x) for x in out) == pytest.approx(1.0)


def test_candidates_without_counts_keep_the_prior_they_have() -> None:
    """No tag in the group (a thesaurus concept, a dictionary sense, an entry never tagged):
    the base prior stays exactly as it was."""
    thesaurus = (Candidate(ILI + "i1", lemma="bank", lang="en", rank=1), Candidate(ILI + "i2", lemma="bank", lang="en", rank=2))
    counts = SenseCounts({EN + "bank-n-2": 9}, {ILI + "i2": 9})
    assert count_prior(thesaurus, [0.0, -math.log(2)], counts, False, PriorConfig()) is None
    assert count_prior(bank_candidates(), [0.0, -math.log(2)], SenseCounts(), False, PriorConfig()) is None
    other_entry = (replace(bank_candidates()[0], entry=EN + "other"),) + bank_candidates()[1:]
    out = count_prior(other_entry, [0.0, -math.log(2)], counts, False, PriorConfig())
    assert out is not None and out[0] == 0.0 and out[1] == pytest.approx(math.log((9 + 1) / 10))


def test_another_language_counts_the_english_senses_of_the_shared_concept(store: EmbeddedStore, tmp_path: Path) -> None:
    """A Hebrew mention's candidates are ILI concepts: 'fabric' (i7) was tagged 30 times in
    English, so it wins over the gloss-count estimate, which prefers 'branch' (i8)."""
    text = "הם קנו הבדים"
    cands = bd_candidates()
    start = text.index("הבדים")
    req = SelectionRequest(Mention(start, start + 5, "הבדים", "he", cands), text, "he", fetch_evidence(store, cands))
    [before] = KnowledgeSelector(store, WORDNET_SCALE).select([req])
    assert before.chosen is not None and before.chosen.concept == ILI + "i8"
    with_counts(store, tmp_path)
    sel = KnowledgeSelector(store, WORDNET_SCALE)
    [comp] = sel.components([req])
    assert comp is not None and comp.prior is not None and comp.regime == "xl-freq"
    alpha = WORDNET_SCALE.xl_freq.alpha
    assert comp.en_prior is not None
    shares = [math.exp(alpha * e) for e in comp.en_prior]
    b = [x / sum(shares) for x in shares]
    # the estimate plus counts_xl * log of the add-one smoothed English tags (30 of 30 for i7)
    k = WORDNET_SCALE.prior.counts_xl
    assert comp.prior == [pytest.approx(alpha * comp.en_prior[0] + k * math.log((30 + b[0]) / 31)),
                          pytest.approx(alpha * comp.en_prior[1] + k * math.log(b[1] / 31))]
    [after] = sel.select([req])
    assert after.chosen is not None and after.chosen.concept == ILI + "i7"
    # a small dictionary (a flat prior, the context decides) takes no counts
    [small] = KnowledgeSelector(store).components([req])
    assert small is not None and small.prior is None and small.regime == "xl"
