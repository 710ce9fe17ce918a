"""The ranking's posting index (kg_rag.pipeline.posting_index): when it answers, it answers what
the store's postings say; every write of a document graph either keeps it current or leaves it
out of date (never current and wrong); ranking gives the same answers either way."""

from __future__ import annotations

import gc
import shutil
import zlib
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.documents.readers import SourceDocument
from kg_rag.errors import StoreError
from kg_rag.pipeline import posting_index, postings, record, retrieve
from kg_rag.store import Change, EmbeddedStore, stamp

QUESTIONS = [("הגבר קרא בקול עם הזריחה", "he"), ("הפירות העמיסו על הבדים", "he"),
             ("Der Hahn tropft", "de"), ("river bank", "en"), ("Bank", None)]


def _open(demo: Path, tmp_path: Path) -> KnowledgeGraph:
    return KnowledgeGraph.open(path=str(shutil.copytree(demo, tmp_path / "s")))


def _concepts(kg: KnowledgeGraph) -> list[str]:
    rows = kg.store.oxigraph.query(
        "PREFIX kgr: <https://w3id.org/kg-rag/ns#> SELECT DISTINCT ?c WHERE { GRAPH ?d { ?p kgr:postingConcept ?c } }")
    return sorted(r["c"].value for r in rows)


def _through_store(kg: KnowledgeGraph, concepts: list[str]) -> dict[str, dict[str, tuple[int, float, float]]]:
    real = posting_index.arrays
    posting_index.arrays = lambda store, cs: None  # type: ignore[assignment]
    try:
        return _plain(postings.read(kg.store, concepts))
    finally:
        posting_index.arrays = real  # type: ignore[assignment]


def _plain(found: dict[str, dict[str, postings.Posting]]) -> dict[str, dict[str, tuple[int, float, float]]]:
    return {d: {c: (p.labels, round(p.agreement, 12), round(p.miss, 12)) for c, p in v.items()}
            for d, v in found.items()}


def _current_and_same(kg: KnowledgeGraph) -> None:
    """The index answers, and what it answers is what the store's postings say."""
    concepts = _concepts(kg)
    assert concepts
    fast = posting_index.arrays(kg.store, concepts)
    assert fast is not None, "the index is out of date"
    assert _plain(postings.read(kg.store, concepts)) == _through_store(kg, concepts)
    assert fast[2] == int(kg.store.select("select-document-count")[0]["n"].value)
    # where the annotations are (highlights, best passage): every pair of the postings
    pairs = [(d, c) for d, per in postings.read(kg.store, concepts).items() for c in per]
    from_index = posting_index.spans(kg.store, pairs)
    real = posting_index.spans
    posting_index.spans = lambda store, ps: None  # type: ignore[assignment]
    try:
        from_store = retrieve._spans(kg.store, pairs)
    finally:
        posting_index.spans = real  # type: ignore[assignment]
    assert from_index == from_store and len(from_store) == len(pairs)


def _answers(kg: KnowledgeGraph) -> list[list[tuple[str, float, float]]]:
    return [[(r.doc_id, r.score, r.relevance) for r in kg.ask(q, lang=lang, k=10, record_question=False).results]
            for q, lang in QUESTIONS]


def test_indexing_leaves_a_current_index_that_answers_what_the_store_says(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    # a copy of the store folder has the store's identity and stamp: the index is current in it
    _current_and_same(kg)
    with_index = _answers(kg)
    real = posting_index.arrays
    posting_index.arrays = lambda store, cs: None  # type: ignore[assignment]
    try:
        assert _answers(kg) == with_index
    finally:
        posting_index.arrays = real  # type: ignore[assignment]
    kg.close()


def test_every_write_of_a_document_keeps_it_current(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    idx = posting_index.index_of(kg.store)
    assert idx is not None
    first = kg.documents()[0]["id"]
    # a new document, one indexed again with other text, one deleted, decisions redone
    kg.index_documents([SourceDocument("extra-1", "The river bank was steep. The bank lent money.", "en")])
    _current_and_same(kg)
    kg.index_documents([SourceDocument(first, "Der Hahn tropft in der Küche.", "de")])
    _current_and_same(kg)
    kg.delete("extra-1")
    _current_and_same(kg)
    report = kg.redecide("first-sense")
    assert report.redecided
    _current_and_same(kg)
    m = idx.manifest()
    assert m is not None and m.stamp == stamp.read(kg.store) and len(m.segments) <= 4
    kg.close()


def test_many_small_writes_keep_few_segments(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    for i in range(12):
        kg.index_documents([SourceDocument(f"small-{i}", f"The bank of the river, number {i}.", "en")])
    _current_and_same(kg)
    m = posting_index.index_of(kg.store).manifest()  # type: ignore[union-attr]
    assert m is not None and len(m.segments) <= 5, m.segments
    kg.close()


def test_merges_stay_within_their_cap_and_answer_the_same(demo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge holds both segments in memory: no merge exceeds MAX_MERGED rows, the writes and a
    rebuild then keep several segments, and the answers are the store's."""
    kg = _open(demo, tmp_path)
    monkeypatch.setattr(posting_index, "MAX_MERGED", 60)
    merged: list[int] = []
    real_merge = posting_index._merge

    def merge(old: posting_index.Block, new: posting_index.Block, keep_retires: bool) -> posting_index.Block:
        merged.append(len(old) + len(new))
        return real_merge(old, new, keep_retires)

    monkeypatch.setattr(posting_index, "_merge", merge)
    posting_index.index_of(kg.store).reset("x", [])  # type: ignore[union-attr]   # out of date
    assert posting_index.refresh(kg.store)           # the rebuild: batches of BATCH documents
    for i in range(12):
        kg.index_documents([SourceDocument(f"small-{i}", f"The bank of the river, number {i}.", "en")])
    _current_and_same(kg)
    assert merged and max(merged) <= 60, merged
    m = posting_index.index_of(kg.store).manifest()  # type: ignore[union-attr]
    assert m is not None and len(m.segments) > 2, m.segments
    # ranking from the segments gives what ranking from the store gives
    with_index = _answers(kg)
    monkeypatch.setattr(posting_index, "arrays", lambda store, cs: None)
    assert _answers(kg) == with_index
    monkeypatch.undo()
    monkeypatch.setattr(posting_index, "MAX_MERGED", 60)
    monkeypatch.setattr(posting_index, "BATCH", 10)   # a rebuild of several batches
    posting_index.index_of(kg.store).reset("x", [])  # type: ignore[union-attr]
    assert posting_index.refresh(kg.store)
    _current_and_same(kg)
    m = posting_index.index_of(kg.store).manifest()  # type: ignore[union-attr]
    assert m is not None and len(m.segments) > 1, m.segments
    kg.close()


def test_postings_written_again_without_a_drop_count_once(demo: Path, tmp_path: Path) -> None:
    """A write that repeats posting nodes already in the store (no drop first) adds no quads to
    the store; the index gets a segment with the same nodes again and must count each once."""
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    before = _answers(kg)
    concept = NamedNode("https://w3id.org/kg-rag/ns#postingConcept")
    again = []
    for doc in kg.documents()[:3]:
        graph = record.doc_iri(doc["id"])
        nodes = {q.subject for q in kg.store.oxigraph.quads_for_pattern(None, concept, None, graph)}
        again += [q for n in nodes for q in kg.store.oxigraph.quads_for_pattern(n, None, None, graph)]
    assert again
    kg.store.apply(Change(insert=again))
    m = posting_index.index_of(kg.store).manifest()  # type: ignore[union-attr]
    assert m is not None and len(m.segments) >= 2      # the repeat is a segment of its own
    _current_and_same(kg)
    assert _answers(kg) == before
    kg.close()


def test_a_write_it_does_not_know_leaves_it_out_of_date_until_rebuilt(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    want = _answers(kg)
    doc = want[0][0][0]   # the first question's first document
    iri = NamedNode("https://w3id.org/kg-rag/id/doc/" + doc)
    # a user's update: not parsed, so the index cannot know what it changed
    kg.update(f"DELETE WHERE {{ GRAPH <{iri.value}> {{ ?p <https://w3id.org/kg-rag/ns#postingConcept> ?c }} }}")
    assert posting_index.arrays(kg.store, ["x"]) is None
    changed = _answers(kg)   # through the store: the postings as they are now
    assert changed != want
    assert posting_index.refresh(kg.store)
    assert _answers(kg) == changed
    # a writer that does not follow the store (another tool of this package, another process)
    kg.store._followers = ()
    kg.store.apply(Change(drop_graphs=[NamedNode("https://w3id.org/kg-rag/id/doc/" + kg.documents()[1]["id"])]))
    assert posting_index.arrays(kg.store, ["x"]) is None
    kg.close()


def test_a_failed_write_leaves_it_out_of_date(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    doc = NamedNode("https://w3id.org/kg-rag/id/doc/broken")
    bad = Quad(doc, NamedNode("https://w3id.org/kg-rag/ns#x"), Literal("x"), doc)
    real = kg.store._apply

    def failing(change: Change) -> None:
        if bad in change.insert:
            raise StoreError("the disk is full")
        real(change)

    kg.store._apply = failing  # type: ignore[method-assign]
    with pytest.raises(StoreError, match="disk is full"):
        kg.store.apply(Change(insert=[bad]))
    kg.store._apply = real  # type: ignore[method-assign]
    assert posting_index.arrays(kg.store, ["x"]) is None
    kg.close()


def test_a_reader_in_another_process_uses_it_read_only(demo: Path, tmp_path: Path) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    want = _answers(kg)
    path = kg.store.location
    kg.close()
    del kg
    gc.collect()
    ro = KnowledgeGraph.open(path=path, read_only=True)
    assert posting_index.arrays(ro.store, ["x"]) is not None
    assert _answers(ro) == want
    ro.close()


def test_an_in_memory_store_keeps_none() -> None:
    store = EmbeddedStore(":memory:")
    assert posting_index.index_of(store) is None
    assert posting_index.arrays(store, ["x"]) is None
    assert not posting_index.refresh(store)


def test_two_writers_that_race_leave_it_out_of_date(demo: Path, tmp_path: Path) -> None:
    """Two processes writing one remote store: B reads the stamp, A moves it and writes, B moves
    the stamp it read and writes; whichever follower comes first, the index is never current
    with only one of the two writes in it."""
    kg = _open(demo, tmp_path)
    store = kg.store
    docs = [NamedNode("https://w3id.org/kg-rag/id/doc/" + d["id"]) for d in kg.documents()[:2]]
    for b_first in (True, False):
        assert posting_index.refresh(store)
        read_by_b = stamp.tokens(store)                       # B reads the stamp …
        before_a, after_a = stamp.move(store)                 # … A moves it, as its write begins
        after_b = stamp.new_token()                           # B moves the one it read
        store._apply(Change(delete=[q for t in read_by_b for q in stamp.quads(t)],
                            insert=stamp.quads(after_b)))
        a, b = Change(drop_graphs=[docs[0]]), Change(drop_graphs=[docs[1]])
        store._apply(a)
        store._apply(b)
        followers = [(read_by_b[0], after_b, b), (before_a, after_a, a)]
        for before, after, change in (followers if b_first else followers[::-1]):
            posting_index._follower(store, before, after, change)
        assert stamp.read(store) is None                      # two tokens: no stamp
        assert posting_index.arrays(store, ["x"]) is None
        docs = [NamedNode("https://w3id.org/kg-rag/id/doc/" + d["id"]) for d in kg.documents()[:2]]
    kg.close()


def test_no_rebuild_while_another_writer_is_writing(demo: Path, tmp_path: Path) -> None:
    """A rebuild reads the store; while a write is under way (its pending stamp set, its quads
    not yet all written) what it would read belongs to no stamp, so it does not rebuild — and
    the writer's follower then brings the index to the write's finished stamp."""
    kg = _open(demo, tmp_path)
    store = kg.store
    assert posting_index.refresh(store)
    before, pending = stamp.begin(store)           # another process begins its write …
    assert not stamp.finished(stamp.read(store) or "")
    assert posting_index.arrays(store, ["x"]) is None
    assert not posting_index.refresh(store)        # … so nothing is rebuilt from half of it
    change = Change(drop_graphs=[NamedNode("https://w3id.org/kg-rag/id/doc/" + kg.documents()[0]["id"])])
    store._apply(change)
    after = stamp.finish(store, pending)
    posting_index._follower(store, before, after, change)
    _current_and_same(kg)
    kg.close()


def test_a_failing_index_never_fails_the_write(demo: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)

    def broken(*_: object) -> None:
        raise ValueError("a damaged segment")

    monkeypatch.setattr(posting_index.Index, "append", broken)
    kg.delete(kg.documents()[0]["id"])                         # written, not followed:
    assert posting_index.arrays(kg.store, ["x"]) is None       # the index is out of date
    kg.index_documents([SourceDocument("extra-2", "The river bank was steep.", "en")])
    assert "extra-2" in {d["id"] for d in kg.documents()}     # written; the run's end rebuilt it
    _current_and_same(kg)
    kg.close()


def test_the_first_row_of_each_key_as_unique_over_stacked_columns_gives_it() -> None:
    """The merge's dedupe (a stable sort of the key columns) keeps exactly the rows np.unique over
    the stacked columns keeps (its first occurrences, in order), and says when none repeats."""
    import numpy as np

    from kg_rag.pipeline.posting_index import _firsts

    rng = np.random.default_rng(7)
    for n, high in ((0, 3), (1, 3), (50, 3), (500, 20), (2_000, 10_000)):
        a = rng.integers(0, high, n).astype(np.int64)
        b = rng.integers(0, high, n).astype(np.uint64)
        c = rng.integers(0, 4, n).astype(np.uint64)
        for cols in ((a, b), (a, b, c)):
            _, first = np.unique(np.stack([x.astype(np.uint64) for x in cols], axis=1), axis=0,
                                 return_index=True)
            got = _firsts(*cols)
            if len(first) == n:
                assert got is None
            else:
                assert got is not None and got.tolist() == sorted(first.tolist())


def test_reading_many_concepts_at_once_gives_what_each_segment_says(tmp_path: Path) -> None:
    """A question's concepts are read from all segments at once. Against a plain reading of
    random segments — a later segment retiring a document's earlier entries, a node written again
    without a drop counting once, a document written in parts (a node per part) summed."""
    import numpy as np

    from kg_rag.pipeline.posting_index import Block, Entries, Index, Manifest, _write_segment
    from kg_rag.pipeline.postings import _summed_each

    rng = np.random.default_rng(11)
    concepts = [f"http://c/{i}" for i in range(12)]

    def values(d: str, c: str, part: int) -> tuple[int, float, float]:   # a node's, every time
        r = np.random.default_rng(zlib.crc32(f"{d} {c} {part}".encode()))
        return int(r.integers(1, 4)), float(r.random()), float(r.random())

    for trial in range(40):
        folder = tmp_path / f"t{trial}"
        folder.mkdir()
        written: list[tuple[int, str, str, int]] = []   # segment, concept, document, node
        retires: list[set[str]] = []
        names: list[str] = []
        for j in range(int(rng.integers(1, 7))):
            e = Entries()
            docs = [f"http://d/{x}" for x in rng.choice(9, size=int(rng.integers(1, 5)), replace=False)]
            e.retires = {d for d in docs if rng.random() < 0.4}
            for d in docs:
                for c in rng.choice(concepts, size=int(rng.integers(1, 6)), replace=False).tolist():
                    part = int(rng.integers(0, 2))
                    node = concepts.index(c) * 100 + int(d.rsplit("/", 1)[1]) * 2 + part
                    labels, agreement, meaning = values(d, c, part)
                    e.concept.append(c)
                    e.doc.append(d)
                    e.node.append(node)
                    e.labels.append(labels)
                    e.agreement.append(agreement)
                    e.meaning.append(meaning)
                    written.append((j, c, d, node))
            retires.append(set(e.retires))
            names.append(f"s{j:08d}")
            _write_segment(folder / names[-1], Block.of(e))
        (folder / "manifest.json").write_text(Manifest("x", tuple(names), len(names)).dump())
        view = Index(folder).view("x")
        assert view is not None
        asked = rng.permutation(concepts)[:int(rng.integers(1, 13))].tolist()
        got = _summed_each(view.postings(asked))
        want: dict[str, dict[str, tuple[int, float, float]]] = {}
        for c in asked:
            nodes = {(d, node) for j, cc, d, node in written if cc == c
                     and not any(d in later for later in retires[j + 1:])}
            for d, node in nodes:
                labels, agreement, meaning = values(d, c, node % 2)
                p = want.setdefault(c, {}).get(d, (0, 0.0, 1.0))
                want[c][d] = (p[0] + labels, p[1] + agreement, p[2] * (1.0 - meaning))
        plain = {c: {view.docs[d]: (cp.posting(i).labels, cp.posting(i).agreement, cp.posting(i).miss)
                     for i, d in enumerate(cp.doc.tolist())} for c, cp in got.items()}
        assert list(got) == [c for c in asked if c in want]   # in the order asked
        assert plain.keys() == want.keys()
        for c in want:
            assert plain[c] == {d: pytest.approx(v) for d, v in want[c].items()}


def test_span_offsets_are_kept_exactly_to_the_last_one_the_files_hold(tmp_path: Path) -> None:
    """Offsets are held in 32 bits (a text of up to 4 G characters): the largest round-trips a
    segment's files; a larger one is refused, never wrapped."""
    from kg_rag.pipeline.posting_index import Block, Entries, Segment, _write_segment

    top = 2**32 - 1
    e = Entries(spans=[("d", "c", 7, (top - 5, top, 0, top))])
    _write_segment(tmp_path / "s", Block.of(e))
    seg = Segment(tmp_path / "s")
    assert [int(x) for x in seg.s_pos[0]] == [top - 5, top, 0, top]
    with pytest.raises(ValueError, match="offset"):
        Block.of(Entries(spans=[("d", "c", 7, (0, top + 1, 0, top + 1))]))


def test_a_rebuild_in_batches_of_one_document_answers_what_the_store_says(
        demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild reads the store's postings a batch of documents at a time and merges the
    batches' arrays as it goes: with one document a batch (many merges) the index it leaves is
    the index of one batch."""
    kg = _open(demo, tmp_path)
    assert posting_index.refresh(kg.store)
    want = _answers(kg)
    one = posting_index.index_of(kg.store)
    assert one is not None and one.manifest() is not None
    shutil.rmtree(one.folder)
    posting_index._INDEXES.clear()
    monkeypatch.setattr(posting_index, "BATCH", 1)
    assert len(kg.documents()) > 4 and posting_index.refresh(kg.store)
    _current_and_same(kg)
    assert _answers(kg) == want
    kg.close()


def test_indexes_of_older_formats_are_swept_once_a_process(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening an index removes the cache's folders of older formats (an upgrade leaves them
    unreadable), keeps this format's and anything else, and looks only once a process."""
    from kg_rag.derived import Derived

    monkeypatch.setattr(posting_index, "_SWEPT", set())
    parent = tmp_path / "cache" / "postings"
    f = posting_index.FORMAT
    for name in (f"{f - 1}-aaaa", f"{f - 2}-bbbb", f"{f}-cccc", f"{f + 1}-dddd", "notes"):
        (parent / name).mkdir(parents=True)
        (parent / name / "manifest.json").write_text("{}", encoding="utf-8")
    (parent / f"{f - 1}-a-file").write_text("not a folder", encoding="utf-8")
    with EmbeddedStore(":memory:") as store:
        Derived.of(store, cache_dir=tmp_path / "cache")
        posting_index._index(store, "some-identity")
        left = sorted(p.name for p in parent.iterdir())
        assert left == sorted([f"{f - 1}-a-file", f"{f}-cccc", f"{f + 1}-dddd", "notes"])
        (parent / f"{f - 1}-eeee").mkdir()
        posting_index._index(store, "another-identity")
        assert (parent / f"{f - 1}-eeee").is_dir()


def test_indexes_whose_stores_are_gone_are_swept(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An index names the stores that opened it; one whose local stores are all gone is removed
    when a process first opens an index, one a store still uses or an endpoint named stays, and
    one that names no store goes only when its manifest is older than UNNAMED_DAYS."""
    import os
    import time

    from kg_rag.derived import Derived

    monkeypatch.setattr(posting_index, "_SWEPT", set())
    monkeypatch.setattr(posting_index, "_NOTED", set())
    parent = tmp_path / "cache" / "postings"
    f = posting_index.FORMAT
    alive = tmp_path / "a-store"
    alive.mkdir()
    deleted = f"embedded\t{tmp_path / 'deleted-store'}"
    names = {"gone": [deleted],
             "one-left": [deleted, f"embedded\t{alive}"],
             "remote": ["remote\thttp://127.0.0.1:7878/query"],
             "old-unnamed": None, "new-unnamed": None}
    for name, users in names.items():
        (parent / f"{f}-{name}").mkdir(parents=True)
        (parent / f"{f}-{name}" / "manifest.json").write_text("{}", encoding="utf-8")
        if users is not None:
            (parent / f"{f}-{name}" / posting_index.USERS).write_text(
                "".join(u + "\n" for u in users), encoding="utf-8")
    old = time.time() - (posting_index.UNNAMED_DAYS + 1) * 86400
    os.utime(parent / f"{f}-old-unnamed" / "manifest.json", (old, old))
    (parent / f"{f}-being-made").mkdir()   # no manifest yet: another process is making it
    with EmbeddedStore(tmp_path / "store") as store:
        Derived.of(store, cache_dir=tmp_path / "cache")
        idx = posting_index._index(store, "some-identity")
        left = sorted(p.name.split("-", 1)[1] for p in parent.iterdir())
        assert left == sorted(["one-left", "remote", "new-unnamed", "being-made",
                               idx.folder.name.split("-", 1)[1]])
        # the store that opened it is named, by its absolute folder, once
        posting_index._index(store, "some-identity")
        assert (idx.folder / posting_index.USERS).read_text(encoding="utf-8") == \
            f"embedded\t{(tmp_path / 'store').resolve()}\n"
    # an endpoint is named by its address, and never taken for gone
    from kg_rag.store.remote import RemoteStore
    remote = RemoteStore("http://127.0.0.1:9/query")
    named = remote.on_engine(posting_index._User(remote.location))
    assert named == "remote\thttp://127.0.0.1:9/query" and not posting_index._gone(named)
    # its store gone, the next process removes it
    shutil.rmtree(tmp_path / "store")
    monkeypatch.setattr(posting_index, "_SWEPT", set())
    with EmbeddedStore(":memory:") as other:
        Derived.of(other, cache_dir=tmp_path / "cache")
        posting_index._index(other, "another-identity")
        assert not idx.folder.exists()
        assert (parent / f"{f}-one-left").is_dir()
