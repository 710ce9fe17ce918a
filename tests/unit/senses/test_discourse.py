"""One sense per discourse (:mod:`kg_rag.senses.knowledge.discourse`): a text's mentions of one
word share a Dirichlet prior centred on the global prior."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig
from kg_rag.senses.knowledge.discourse import pooled
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import ILI, bank_candidates, load_fixture


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def test_a_lone_mention_and_kappa_zero_change_nothing() -> None:
    t = [np.array([0.0, 1.0]), np.array([2.0, 0.0])]
    prior = [np.array([0.0, 0.0])] * 2
    assert all(a is b for a, b in zip(pooled(["a", "b"], t, prior, [1.0, 1.0], 1.0), t, strict=True))
    assert all(a is b for a, b in zip(pooled(["a", "a"], t, prior, [1.0, 1.0], 0.0), t, strict=True))
    assert all(a is b for a, b in zip(pooled([None, None], t, prior, [1.0, 1.0], 1.0), t, strict=True))


def test_the_prior_is_replaced_by_the_predictive_of_the_others() -> None:
    """Two mentions, a flat global prior: the first says nothing of its own, the second is sure
    of sense 1 — the first's probabilities become (κ·π + q_2) / (κ + 1)."""
    flat = np.zeros(2)
    quiet, sure = np.zeros(2), np.array([0.0, 4.0])
    out = pooled(["w", "w"], [quiet, sure], [flat, flat], [1.0, 1.0], 1.0)
    q2 = _softmax(sure)
    expected = (0.5 + q2) / 2
    assert _softmax(out[0]) == pytest.approx(expected)
    # a mention that says nothing beyond the prior does not move the others
    assert _softmax(out[1]) == pytest.approx(q2)


def test_the_inverse_temperature_replaces_exactly_the_prior_factor() -> None:
    """With sharpness s, the stored probabilities are softmax(s · score): after pooling they are
    θ_i × exp(s · evidence_i), normalised — the prior factor and nothing else replaced."""
    s = 0.4
    prior = np.array([2.0, 0.0])                  # the prior part of the score
    evid = [np.array([0.0, 1.5]), np.array([0.0, 3.0]), np.array([0.5, 0.0])]
    totals = [prior + e for e in evid]
    out = pooled(["w"] * 3, totals, [prior] * 3, [s] * 3, 1.0)
    pi = _softmax(s * prior)
    q = [_softmax(s * t) for t in totals]
    theta0 = (pi + q[1] + q[2]) / 3
    want = theta0 * np.exp(s * evid[0])
    assert _softmax(s * out[0]) == pytest.approx(want / want.sum())


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")
    return load_fixture(mem_store)


def _bank(store: EmbeddedStore, context: str, at: int, others: tuple[Mention, ...] = ()) -> SelectionRequest:
    m = Mention(at, at + 4, "bank", "en", bank_candidates())
    return SelectionRequest(m, context, "en", fetch_evidence(store, bank_candidates()), others)


def test_a_mention_without_context_follows_the_texts_other_mentions_of_the_word(
        store: EmbeddedStore) -> None:
    """'look at the bank' alone goes to the sense-rank prior (the money bank); in a text whose
    other 'bank' is clearly the river's, it moves toward the river bank."""
    river = Mention(29, 34, "river", "en", (Candidate(ILI + "i3", lemma="river", lang="en", rank=1),))
    first = _bank(store, "they pulled the canoe up on the river bank", 38, (river,))
    second = _bank(store, "look at the bank", 12)
    alone = KnowledgeSelector(store, KnowledgeSelectorConfig(discourse=0.0)).select([first, second])
    pooled_ = KnowledgeSelector(store).select([first, second])
    river_bank = bank_candidates()[1].id
    assert alone[0].chosen == bank_candidates()[1] and alone[1].chosen == bank_candidates()[0]
    assert dict(pooled_[1].scores)[river_bank] > dict(alone[1].scores)[river_bank]
    # each alone in its own batch: exactly the unpooled decisions
    assert KnowledgeSelector(store).select([second])[0].scores == alone[1].scores

