"""Verb subcategorisation frames: loaded from WN-LMF, observed in plain text, used by the
knowledge selector to prefer the sense whose frames fit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.namespaces import DCT, ID, KGR, RDFS, SYNSEM
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import FrameFit, KnowledgeSelectorConfig
from kg_rag.senses.knowledge.frames import (
    Frame,
    Pattern,
    compatibility,
    frame_fits,
    observe,
    parse_frame,
    sense_frames,
)
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import lmf_store

# "run": sense 1 transitive (operate), sense 2 intransitive (move fast); "fly": LMF 1.0 style
LMF = """<?xml version="1.0" encoding="UTF-8"?>
<LexicalResource xmlns:dc="https://globalwordnet.github.io/schemas/dc/">
<Lexicon id="t" label="test" language="en" email="a@example.org" license="https://example.org/l" version="1">
  <LexicalEntry id="t-run-v"><Lemma writtenForm="run" partOfSpeech="v"/>
    <Sense id="t-run__2.41.00.." subcat="vtai vtaa" synset="t-operate-v"/>
    <Sense id="t-run__2.38.00.." subcat="via" synset="t-move-v"/>
  </LexicalEntry>
  <LexicalEntry id="t-fly-v"><Lemma writtenForm="fly" partOfSpeech="v"/>
    <Sense id="t-fly__2.38.00.." synset="t-move-v"/>
    <SyntacticBehaviour subcategorizationFrame="Somebody ----s" senses="t-fly__2.38.00.."/>
  </LexicalEntry>
  <Synset id="t-operate-v" ili="" partOfSpeech="v"><Definition>direct or control a business</Definition></Synset>
  <Synset id="t-move-v" ili="" partOfSpeech="v"><Definition>move fast on foot</Definition></Synset>
  <SyntacticBehaviour id="via" subcategorizationFrame="Somebody ----s"/>
  <SyntacticBehaviour id="vtaa" subcategorizationFrame="Somebody ----s somebody"/>
  <SyntacticBehaviour id="vtai" subcategorizationFrame="Somebody ----s something"/>
</Lexicon></LexicalResource>
"""
T = ID + "wn/t/"
RUN = (Candidate(T + "t-operate-v", sense=T + "t-run__2.41.00..", lemma="run", lang="en", rank=1, pos="verb"),
       Candidate(T + "t-move-v", sense=T + "t-run__2.38.00..", lemma="run", lang="en", rank=2, pos="verb"))


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")   # the knowledge base's disk cache, per test
    return lmf_store(mem_store, tmp_path, LMF)


def _objects(store: EmbeddedStore, s: str, p: NamedNode) -> set[str]:
    return {str(getattr(q.object, "value", q.object))
            for q in store.oxigraph.quads_for_pattern(NamedNode(s), p, None)}


def test_loader_keeps_frames_on_senses_and_entries(store: EmbeddedStore) -> None:
    assert _objects(store, T + "t-run__2.41.00..", KGR.subcat) == {T + "frame-vtai", T + "frame-vtaa"}
    assert _objects(store, T + "t-run__2.38.00..", KGR.subcat) == {T + "frame-via"}
    assert _objects(store, T + "t-run-v", SYNSEM.synBehavior) == {T + f"frame-{f}" for f in ("via", "vtaa", "vtai")}
    frame = NamedNode(T + "frame-vtai")
    assert [q.object for q in store.oxigraph.quads_for_pattern(frame, RDFS.label, None)] == [
        Literal("Somebody ----s something", language="en")]
    assert _objects(store, T + "frame-vtai", DCT.identifier) == {"vtai"}
    # WN-LMF 1.0: an entry-level behaviour naming its senses
    [fly] = _objects(store, T + "t-fly__2.38.00..", KGR.subcat)
    assert _objects(store, fly, RDFS.label) == {"Somebody ----s"}
    assert _objects(store, T + "t-fly-v", SYNSEM.synBehavior) == {fly}


def test_sense_frames_query(store: EmbeddedStore) -> None:
    got = sense_frames(store, [c.sense for c in RUN if c.sense] + [T + "nowhere"])
    assert got[T + "t-run__2.41.00.."] == (Frame("obj"),)  # vtaa and vtai reduce to one frame
    assert got[T + "t-run__2.38.00.."] == (Frame("end"),)
    assert got[T + "nowhere"] == ()


@pytest.mark.parametrize(("label", "frame"), [
    ("Somebody ----s", Frame("end")),
    ("It is ----ing", Frame("end")),
    ("Something ----s something", Frame("obj")),
    ("Somebody ----s somebody something", Frame("obj")),
    ("Somebody ----s something to somebody", Frame("obj", "to")),
    ("Somebody ----s somebody to INFINITIVE", Frame("obj", "to-inf")),
    ("Somebody ----s to INFINITIVE", Frame("toinf")),
    ("Somebody ----s to somebody", Frame("pp:to")),
    ("Somebody ----s on something", Frame("pp:on")),
    ("Something is ----ing PP", Frame("pp:*")),
    ("Somebody ----s that CLAUSE", Frame("that")),
    ("Somebody ----s VERB-ing", Frame("ger")),
    ("Something ----s Adjective/Noun", Frame("adj")),
])
def test_parse_frame(label: str, frame: Frame) -> None:
    assert parse_frame(label) == frame


@pytest.mark.parametrize(("text", "verb", "lemma", "pattern"), [
    ("They suffered from malnutrition.", "suffered", "suffer", Pattern("pp:from")),
    ("you chose to cite such groups", "chose", "choose", Pattern("toinf")),
    ("he went to the store", "went", "go", Pattern("pp:to")),
    ("The study shows that nearly 40 % are women", "shows", "show", Pattern("that")),
    ("I declined. Nobody asked", "declined", "decline", Pattern("end")),
    ("she runs the company", "runs", "run", Pattern("obj")),
    ("he didn't really get rolling until 1975", "get", "get", Pattern("ger")),
    ("it can be developed only through study", "developed", "develop", Pattern("pp:through", True)),
    ("a problem created by the cutbacks", "created", "create", Pattern("pp:by", True)),
    ("we have made no such statement", "made", "make", Pattern("obj")),   # perfect, not passive
])
def test_observe_from_tokens_alone(text: str, verb: str, lemma: str, pattern: Pattern) -> None:
    start = text.index(verb)
    assert observe(text, start, start + len(verb), lemma) == pattern


FIT = FrameFit()


def test_compatibility() -> None:
    transitive, intransitive, pp = Frame("obj"), Frame("end"), Frame("pp:*")
    assert compatibility(Pattern("end"), [transitive, intransitive], FIT) == 1.0
    assert compatibility(Pattern("end"), [transitive], FIT) == 0.0
    assert compatibility(Pattern("obj", passive=True), [transitive], FIT) == 1.0
    assert compatibility(Pattern("obj", passive=True), [intransitive], FIT) == 0.0
    assert compatibility(Pattern("pp:on"), [Frame("pp:on")], FIT) > compatibility(Pattern("pp:on"), [pp], FIT) \
        > compatibility(Pattern("pp:on"), [intransitive], FIT) > compatibility(Pattern("pp:on"), [transitive], FIT)
    assert compatibility(Pattern("obj"), [], FIT) == 0.0
    # the partial matches are the config's
    assert compatibility(Pattern("pp:on"), [pp], replace(FIT, pp_generic=0.25)) == 0.25


def _request(store: EmbeddedStore, context: str, word: str,
             cands: tuple[Candidate, ...] = RUN) -> SelectionRequest:
    start = context.index(word)
    return SelectionRequest(Mention(start, start + len(word), word, "en", cands), context, "en",
                            fetch_evidence(store, cands))


def test_frame_fits_only_for_english_verbs(store: EmbeddedStore) -> None:
    nouns = tuple(Candidate(c.concept, sense=c.sense, lemma="run", lang="en", rank=c.rank, pos="noun")
                  for c in RUN)
    fits = frame_fits(store, [_request(store, "The dog runs.", "runs"),
                              _request(store, "she runs the company", "runs"),
                              _request(store, "The dog runs.", "runs", nouns)], FIT)
    assert fits == [[0.0, 1.0], [1.0, 0.0], None]


def test_selector_prefers_the_sense_whose_frame_fits(store: EmbeddedStore) -> None:
    config = KnowledgeSelectorConfig()
    assert config.english.frames > 0
    sel = KnowledgeSelector(store)
    intransitive, transitive = sel.select([_request(store, "Every morning the dog runs.", "runs"),
                                           _request(store, "Every morning she runs the company", "runs")])
    assert intransitive.chosen == RUN[1]  # though "operate" is listed first
    assert transitive.chosen == RUN[0]
    no_frames = replace(config, english=replace(config.english, frames=0.0))
    [plain] = KnowledgeSelector(store, no_frames).select(
        [_request(store, "Every morning the dog runs.", "runs")])
    assert plain.chosen == RUN[0]  # without the frames the sense order decides


def test_a_store_without_frames_warns_once_and_loading_them_is_noticed(
        mem_store: EmbeddedStore, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A store whose WordNet was loaded before frames were kept: no fits, one warning that says
    to reload; after a load (KnowledgeGraph.load invalidates the caches) the frames are used."""
    from kg_rag.api import KnowledgeGraph
    from kg_rag.senses.knowledge.frames import has_frames

    kg = KnowledgeGraph(mem_store)
    keyed = tuple(replace(c, sense_key=f"run%2:{c.rank}::") for c in RUN)   # a WordNet's senses
    req = SelectionRequest(Mention(4, 8, "runs", "en", keyed), "she runs the company", "en", {})
    other = KnowledgeGraph(EmbeddedStore(":memory:"))   # a dictionary without sense keys: no warning
    plain = SelectionRequest(Mention(4, 8, "runs", "en", RUN), "she runs the company", "en", {})
    with caplog.at_level("WARNING", logger="kg_rag.senses.knowledge.frames"):
        assert frame_fits(other.store, [plain], FIT) == [None]
    assert not caplog.records
    with caplog.at_level("WARNING", logger="kg_rag.senses.knowledge.frames"):
        assert frame_fits(mem_store, [req], FIT) == [None]
        assert frame_fits(mem_store, [req], FIT) == [None]
    warnings = [r for r in caplog.records if "reload" in r.getMessage()]
    assert len(warnings) == 1
    path = tmp_path / "frames-lmf.xml"
    path.write_text(LMF, encoding="utf-8")
    kg.load([path])
    assert has_frames(mem_store)
    assert frame_fits(mem_store, [req], FIT)[0] == [1.0, 0.0]


def test_a_wordnet_loaded_under_an_older_mapping_is_stale_and_make_eval_reloads_it(
        mem_store: EmbeddedStore, tmp_path: Path) -> None:
    """The catalog records the loader's mapping version; a WordNet recorded under version 1
    (before frames were kept) is stale — `kg-rag sources` says so, `make eval` reloads it."""
    import gzip
    from dataclasses import replace as with_

    from kg_rag.eval.report import _ensure_loaded
    from loaders import list_sources, mapping_version, stale
    from loaders.catalog import write_record

    name = "english-wordnet-2025.xml.gz"
    (tmp_path / name).write_bytes(gzip.compress(LMF.encode("utf-8")))
    _ensure_loaded(mem_store, tmp_path, (name,))
    [rec] = list_sources(mem_store)
    assert rec.kind == "wn-lmf" and rec.mapping == mapping_version("wn-lmf") == 2 and not stale(rec)
    write_record(mem_store, with_(rec, mapping=1, loaded_at="2026-01-01T00:00:00Z"))   # as loaded before
    assert stale(list_sources(mem_store)[0])
    _ensure_loaded(mem_store, tmp_path, (name,))                                     # reloaded
    [again] = list_sources(mem_store)
    assert again.mapping == 2 and again.loaded_at != "2026-01-01T00:00:00Z"
    assert mem_store.ask("ask-store-has-frames")
