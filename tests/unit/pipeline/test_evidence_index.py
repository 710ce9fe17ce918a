"""The evidence and lemma indexes (kg_rag.pipeline.evidence_index) give exactly what the per-call
queries give: the same readings per lemma and the same evidence per candidate, texts in the same
order — on the sense fixture, and for every match key, sense and concept of the bundled demo
(a thesaurus and a dictionary loaded by the real loaders, with documents indexed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal

from kg_rag.annotate.candidates import lemma_readings, queried_lemma_readings
from kg_rag.derived import Derived
from kg_rag.model import Candidate, LangText
from kg_rag.pipeline import evidence_index as ei
from kg_rag.pipeline.evidence import fetch_evidence, queried_evidence
from kg_rag.store import EmbeddedStore, Store
from tests.support.senses_fixture import (
    HE,
    add_branch_sense_texts,
    bank_candidates,
    bd_candidates,
    fruit_candidates,
    load_fixture,
    remove_bank_definition,
)
from tests.support.service_server import demo_store

_EVERY_KEY = """
SELECT DISTINCT ?key WHERE { GRAPH ?g { ?e <https://w3id.org/kg-rag/ns#matchKey> ?key } }
"""
_EVERY_SENSE_AND_CONCEPT = """
PREFIX ontolex: <http://www.w3.org/ns/lemon/ontolex#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
SELECT DISTINCT ?sense ?concept WHERE {
  { GRAPH ?g { ?e ontolex:sense ?sense } OPTIONAL { GRAPH ?g2 { ?sense ontolex:isLexicalizedSenseOf ?concept } } }
  UNION { GRAPH ?g { ?concept a skos:Concept } }
}
"""


def _keys(store: EmbeddedStore) -> list[Literal]:
    # a test's own enumeration of the store (no value is formatted into the text)
    return [r["key"] for r in store.oxigraph.query(_EVERY_KEY)]  # type: ignore[union-attr,index]


def _same_readings(store: Store, keys: list[Literal]) -> int:
    n = 0
    for k in keys:
        lang = k.language or ""
        for graph in (None, "https://w3id.org/kg-rag/id/graph/none"):
            fast = lemma_readings(store, k.value, lang, graph)
            assert fast == queried_lemma_readings(store, k.value, lang, graph), (k, graph)
            n += len(fast)
    return n


def test_fixture_lemmas_and_evidence_agree(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    assert ei.evidence_index(store) is not None  # a small store is indexed on first use
    assert _same_readings(store, _keys(store)) > 0
    for cands in (bank_candidates(), bd_candidates(), fruit_candidates()):
        fast = fetch_evidence(store, cands)
        assert fast == queried_evidence(store, cands)
        assert any(e.definitions for e in fast)
    # the fixture's own figures come through the index
    river = fetch_evidence(store, bank_candidates())[1]
    assert river.definitions == (LangText("sloping land beside a body of water such as a river", "en"),)


def test_demo_every_key_sense_and_concept_agree() -> None:
    store = demo_store()
    keys = _keys(store)
    assert len(keys) > 100
    assert _same_readings(store, keys) > 100
    rows = list(store.oxigraph.query(_EVERY_SENSE_AND_CONCEPT))  # type: ignore[arg-type]
    cands = [Candidate(concept=(r["concept"] or r["sense"]).value,  # type: ignore[index,union-attr]
                       sense=r["sense"].value if r["sense"] is not None else None)  # type: ignore[index]
             for r in rows]
    assert len(cands) > 100
    for i in range(0, len(cands), 7):  # in groups, as mentions come
        group = cands[i : i + 7]
        assert fetch_evidence(store, group) == queried_evidence(store, group)
    assert sum(1 for e in fetch_evidence(store, cands) if e.definitions) > 50


def test_sense_level_evidence_and_sense_only_readings(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    add_branch_sense_texts(store, register=True)
    Derived.of(store).invalidate()
    fast = fetch_evidence(store, bd_candidates())
    assert fast == queried_evidence(store, bd_candidates())
    assert fast[1].definitions[0] == LangText("ענף של עץ", "he")
    assert LangText("formalRegister", "") in fast[1].usage
    assert LangText("branch", "en") in fast[1].translations
    # a sense-only reading: the concept is the sense, texts kept once
    only = (Candidate(HE + "bd-n-2", HE + "bd-n-2", HE + "bd-n", "בד", "he"),)
    assert fetch_evidence(store, only) == queried_evidence(store, only)


def test_index_is_a_snapshot_until_invalidated(mem_store: EmbeddedStore) -> None:
    store = load_fixture(mem_store)
    Derived.of(store).invalidate()
    assert fetch_evidence(store, bank_candidates())[0].definitions
    remove_bank_definition(store)
    assert fetch_evidence(store, bank_candidates())[0].definitions  # the vocabulary's snapshot
    Derived.of(store).invalidate()  # what loading or dropping a vocabulary does
    assert not fetch_evidence(store, bank_candidates())[0].definitions


def test_large_store_queries_until_prepared_then_reads_the_disk_file(
        mem_store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)      # as if the store were large
    derived = Derived.of(store, tmp_path)
    derived.invalidate()
    assert ei.evidence_index(store) is None and ei.lemma_index(store) is None
    before = fetch_evidence(store, bank_candidates())   # queried per call
    ei.prepare(store)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and all(f.endswith(".sqlite") and derived.version() in f for f in files)
    assert fetch_evidence(store, bank_candidates()) == before
    # a new process (here: a new generation of the registry) opens the files without building
    derived.invalidate()
    monkeypatch.setattr(ei, "_build", lambda *a: pytest.fail("built again"))
    assert ei.evidence_index(store) is not None and ei.lemma_index(store) is not None
    assert fetch_evidence(store, bank_candidates()) == before
    assert lemma_readings(store, "bank", "en") == queried_lemma_readings(store, "bank", "en")


def test_unreadable_disk_file_is_rebuilt(mem_store: EmbeddedStore, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    derived = Derived.of(store, tmp_path)
    derived.invalidate()
    bad = tmp_path / f"evidence-{ei.FORMAT}-{derived.version()}.sqlite"
    bad.write_bytes(b"not a database")
    ei.prepare(store, lemmas=False)
    assert fetch_evidence(store, bank_candidates()) == queried_evidence(store, bank_candidates())
    assert bad.read_bytes().startswith(b"SQLite format 3")
    assert [p.name for p in tmp_path.iterdir()] == [bad.name]  # no temporary file left


def test_a_failed_build_leaves_no_file(mem_store: EmbeddedStore, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    Derived.of(store, tmp_path).invalidate()

    def broken(*a: object) -> object:
        raise RuntimeError("engine failure")

    monkeypatch.setattr(ei, "_rows", broken)
    with pytest.raises(RuntimeError):
        ei.prepare(store)
    assert list(tmp_path.iterdir()) == []


def _blocking_rows(monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """``_rows`` made to wait, once it has started, until the test lets it go on."""
    import threading

    started, go = threading.Event(), threading.Event()
    rows = ei._rows

    def waiting(store: Store, name: str) -> object:
        started.set()
        assert go.wait(30)
        return rows(store, name)

    monkeypatch.setattr(ei, "_rows", waiting)
    return started, go


def test_a_build_does_not_hold_up_other_lookups(mem_store: EmbeddedStore, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """While one thread builds a large store's index (a minute on OEWN), another thread's
    lookups are answered by the per-call queries at once, and a second asker for the index
    waits for that build instead of making its own."""
    import threading
    import time

    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    Derived.of(store, tmp_path).invalidate()
    started, go = _blocking_rows(monkeypatch)
    builder = threading.Thread(target=ei.prepare, args=(store, False))
    builder.start()
    assert started.wait(30)
    try:
        t0 = time.perf_counter()
        assert ei.evidence_index(store) is None          # not waiting for the build
        assert time.perf_counter() - t0 < 10
        assert fetch_evidence(store, bank_candidates()) == queried_evidence(store, bank_candidates())
        got: list[object] = []
        second = threading.Thread(target=lambda: got.append(ei.evidence_index(store, build=True)))
        second.start()
        second.join(0.3)
        assert second.is_alive()                          # waits for the one build
    finally:
        go.set()
    builder.join(30)
    second.join(30)
    assert got and got[0] is not None
    assert len(list(tmp_path.glob("evidence-*.sqlite"))) == 1


def test_a_build_finishes_while_another_thread_holds_the_registry(
        mem_store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder needs nothing of the registry's lock once it has started, so a thread that
    holds that lock (building the annotator, say) while it asks for the index cannot deadlock
    with it."""
    import threading

    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    derived = Derived.of(store, tmp_path)
    derived.invalidate()
    started, go = _blocking_rows(monkeypatch)
    builder = threading.Thread(target=ei.prepare, args=(store, False))
    builder.start()
    assert started.wait(30)
    with derived.lock:
        go.set()
        builder.join(20)
        finished = not builder.is_alive()
        assert finished
        assert ei.evidence_index(store) is not None


def test_an_index_built_across_a_catalog_change_is_not_used(
        mem_store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    derived = Derived.of(store, tmp_path)
    derived.invalidate()
    started, go = _blocking_rows(monkeypatch)
    got: list[object] = []
    builder = threading.Thread(target=lambda: got.append(ei.evidence_index(store, build=True)))
    builder.start()
    assert started.wait(30)
    derived.invalidate()      # what loading a vocabulary does, while the index is built
    go.set()
    builder.join(30)
    assert got == [None]
    assert list(tmp_path.glob("evidence-*")) == []   # its file is gone too


def test_the_service_builds_the_indexes_after_its_warm_up(
        mem_store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from kg_rag.api import KnowledgeGraph
    from kg_rag.service.rest import RestApi
    from kg_rag.settings import settings as current

    store = load_fixture(mem_store)
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    cfg = replace(current(), cache_dir=str(tmp_path))
    kg = KnowledgeGraph(store, cfg)
    kg.derived.invalidate()
    rest = RestApi(kg, cfg)
    rest.start()
    assert rest.ready.is_set()
    assert sorted(p.name.split("-")[0] for p in tmp_path.glob("*.sqlite")) == ["evidence", "lemmas"]


@settings(max_examples=60, deadline=None)
@given(key=st.text(max_size=30), lang=st.sampled_from(["en", "he", "EN", "", "x'); DROP TABLE records; --"]))
def test_hostile_keys_are_bound(key: str, lang: str) -> None:
    store = _FIXTURE.get("store")
    if store is None:
        store = _FIXTURE["store"] = load_fixture(EmbeddedStore(":memory:"))
    readings = lemma_readings(store, key, lang)
    assert all(r.concept for r in readings)
    assert fetch_evidence(store, [Candidate(key or "x", key or None)])[0].candidate.concept == (key or "x")
    assert ei.evidence_index(store) is not None  # the tables are still there


_FIXTURE: dict[str, EmbeddedStore] = {}


def test_index_runs_build_the_indexes_once_their_characters_reach_the_match_keys(
        mem_store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``worth_building``, rent or buy: a run of at least as many characters as the store has
    match keys builds the lemma and evidence indexes before it indexes (they pay for themselves
    within it); shorter runs are tallied in the cache folder, and the run that brings the tally
    to the match keys builds them; once they are on disk no run builds or tallies."""
    from dataclasses import replace

    from kg_rag.api import KnowledgeGraph
    from kg_rag.documents import SourceDocument
    from kg_rag.settings import settings as current

    store = load_fixture(mem_store)
    kg = KnowledgeGraph(store, replace(current(), cache_dir=str(tmp_path)))
    kg.derived.invalidate()
    keys = int(store.select("select-match-key-count")[0]["n"].value)
    assert keys > 5
    assert not ei.worth_building(store, 10 * keys)  # a small store: made in memory, never on disk
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)      # as if the store were large
    assert ei.worth_building(store, keys)          # asking for a run that long records nothing
    text = "the bank of the river " * keys

    def run(doc_id: str, n: int) -> list[str]:
        kg.index_documents([SourceDocument(id=doc_id, text=text[:n], lang="en")])
        return sorted(p.name.split("-")[0] for p in tmp_path.glob("*.sqlite"))

    tally = next(iter(tmp_path.glob("unindexed-*.chars")), None)
    assert tally is None
    assert run("a", keys - 3) == []
    (tally,) = tmp_path.glob("unindexed-*.chars")
    assert tally.read_text().strip() == str(keys - 3)
    assert run("b", 1) == [] and tally.read_text().strip() == str(keys - 2)
    assert run("c", 2) == ["evidence", "lemmas"]
    assert not ei.worth_building(store, 10 * keys)  # on disk: opened when used, nothing tallied
    assert tally.read_text().strip() == str(keys - 2)


def test_an_unreadable_tally_counts_as_none(mem_store: EmbeddedStore, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from kg_rag.api import KnowledgeGraph
    from kg_rag.settings import settings as current

    store = load_fixture(mem_store)
    kg = KnowledgeGraph(store, replace(current(), cache_dir=str(tmp_path)))
    kg.derived.invalidate()
    monkeypatch.setattr(ei, "SMALL_KEYS", 0)
    keys = int(store.select("select-match-key-count")[0]["n"].value)
    assert not ei.worth_building(store, 3)
    (tally,) = tmp_path.glob("unindexed-*.chars")
    tally.write_text("not a number\n")
    assert not ei.worth_building(store, keys - 1)   # counted from 0 again, not an error
    assert tally.read_text().strip() == str(keys - 1)
    assert ei.worth_building(store, 1)
