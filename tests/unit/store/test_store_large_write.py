"""A large add-only change (a batch of documents, a long document) goes through the engine's bulk
loader in parts, so the engine never holds it in one transaction; the result is the
one-transaction result, and a part that fails — even half written — leaves the store as it was,
quads it held before the write included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.errors import StoreError
from kg_rag.store import Change, EmbeddedStore
from kg_rag.store import embedded as embedded_module

G = NamedNode("urn:kgr-test:doc")
SHARED = NamedNode("urn:kgr-test:shared")
P = NamedNode("urn:kgr-test:p")


def _quads(n: int) -> list[Quad]:
    return [Quad(NamedNode(f"urn:kgr-test:s{i}"), P, Literal(f"v{i}"), G) for i in range(n)]


def _all(store: EmbeddedStore) -> set[str]:
    return {str(q) for q in store.oxigraph}


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(embedded_module, "PART", 10)
    monkeypatch.setattr(embedded_module, "BULK_MIN", 10)
    return 10


def test_a_large_change_in_parts_equals_one_transaction(small_parts: int, tmp_path: Path) -> None:
    quads = _quads(95)
    with EmbeddedStore(tmp_path / "parts") as parts, EmbeddedStore(":memory:") as whole:
        parts.apply(Change(insert=quads))
        whole.oxigraph.extend(quads)
        assert _all(parts) == _all(whole) and len(parts.oxigraph) == 95
        assert parts.writes == 2  # one write, however many parts


class _FailingEngine:
    """The engine, failing at its ``fail_at``-th ``bulk_extend`` as a full disk would, after
    writing half of that part (the bulk loader promises no transaction)."""

    def __init__(self, engine: pyoxigraph.Store, fail_at: int) -> None:
        self._engine, self._left = engine, fail_at

    def bulk_extend(self, quads: list[Quad]) -> None:
        self._left -= 1
        if self._left == 0:
            self._engine.bulk_extend(quads[: len(quads) // 2])
            raise OSError("No space left on device")
        self._engine.bulk_extend(quads)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def __contains__(self, q: Quad) -> bool:
        return q in self._engine


def test_a_part_failing_removes_the_parts_before_it_and_keeps_what_was_there(small_parts: int) -> None:
    before = Quad(NamedNode("urn:kgr-test:agent"), P, Literal("known"), SHARED)
    with EmbeddedStore(":memory:") as store:
        store.apply(Change(insert=[before]))
        held = _all(store)
        engine = store.oxigraph
        store._store = _FailingEngine(engine, fail_at=4)  # type: ignore[assignment]
        # the quad the store already held is part of the change, in its first part
        with pytest.raises(StoreError, match="nothing was written"):
            store.apply(Change(insert=[before, *_quads(60)]))
        store._store = engine
        assert _all(store) == held


class _CountingEngine:
    """The engine, counting its ``extend`` and ``bulk_extend`` calls and their sizes."""

    def __init__(self, engine: pyoxigraph.Store) -> None:
        self._engine, self.sizes = engine, []  # type: Any, list[tuple[str, int]]

    def extend(self, quads: list[Quad]) -> None:
        self.sizes.append(("extend", len(quads)))
        self._engine.extend(quads)

    def bulk_extend(self, quads: list[Quad]) -> None:
        self.sizes.append(("bulk", len(quads)))
        self._engine.bulk_extend(quads)

    def __contains__(self, quad: Quad) -> bool:
        return quad in self._engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


def test_a_change_may_ask_for_smaller_parts(small_parts: int, tmp_path: Path) -> None:
    """``Change.part`` (a long document's sections): parts of that many quads, below PART."""
    with EmbeddedStore(tmp_path / "parts") as store:
        counting = _CountingEngine(store._store)
        store._store = counting  # type: ignore[assignment]
        store.apply(Change(insert=_quads(25), part=4))
        store.apply(Change(insert=_quads(40)[25:]))        # the store's own bound: one part
        assert counting.sizes == [("bulk", 4)] * 6 + [("bulk", 1), ("bulk", 10), ("bulk", 5)]
        assert len(counting._engine) == 40


def test_a_small_change_is_one_transaction_a_large_one_goes_through_the_bulk_loader(
        small_parts: int, tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path / "s") as store:
        counting = _CountingEngine(store._store)
        store._store = counting  # type: ignore[assignment]
        store.apply(Change(insert=_quads(9)))
        store.apply(Change(insert=_quads(19)))   # parts of 10, each without what is held (9)
        assert counting.sizes == [("extend", 9), ("bulk", 1), ("bulk", 9)]
        assert {str(q) for q in counting._engine} == {str(q) for q in _quads(19)}


def test_a_known_fact_is_not_written_again_and_a_failed_write_keeps_it(small_parts: int,
                                                                       tmp_path: Path) -> None:
    """A new fact about a known subject is written, a known fact is not written again — so a
    failed write never removes it — and a fact known only in another graph is new in this one."""
    s = NamedNode("urn:kgr-test:s3")
    known = Quad(s, P, Literal("v3"), G)
    elsewhere = Quad(NamedNode("urn:kgr-test:s4"), P, Literal("v4"), SHARED)
    with EmbeddedStore(tmp_path / "s") as store:
        store.apply(Change(insert=[known, elsewhere]))
        counting = _CountingEngine(store._store)
        store._store = counting  # type: ignore[assignment]
        extra = Quad(s, P, Literal("more"), G)
        store.apply(Change(insert=[*_quads(10), extra]))
        # s3 "v3" (in _quads too) is left out; its new quad and s4 (known only elsewhere) written
        assert counting.sizes == [("bulk", 9), ("bulk", 1)]
        assert extra in counting._engine and Quad(NamedNode("urn:kgr-test:s4"), P, Literal("v4"), G) in counting._engine
        engine = counting._engine
        store._store = _FailingEngine(engine, fail_at=1)  # type: ignore[assignment]
        with pytest.raises(StoreError, match="nothing was written"):
            store.apply(Change(insert=[known, *_quads(30)[20:]]))
        store._store = engine
        assert known in engine and extra in engine


class _LookupCountingEngine(_CountingEngine):
    """The engine, counting the quads looked up one by one and the subjects looked up."""

    def __init__(self, engine: pyoxigraph.Store) -> None:
        super().__init__(engine)
        self.quad_lookups = 0
        self.subject_lookups = 0

    def __contains__(self, quad: Quad) -> bool:
        self.quad_lookups += 1
        return quad in self._engine

    def quads_for_pattern(self, *pattern: Any) -> Any:
        self.subject_lookups += 1
        return self._engine.quads_for_pattern(*pattern)


def _decision(root: str, n: int, g: NamedNode = SHARED) -> list[Quad]:
    """A root subject and ``n`` nodes nested under it (``root#c…``), two quads each."""
    r = NamedNode(root)
    quads = [Quad(r, P, Literal("decided"), g)]
    for i in range(n):
        node = NamedNode(f"{root}#c{i}")
        quads += [Quad(r, NamedNode("urn:kgr-test:candidate"), node, g), Quad(node, P, Literal(f"s{i}"), g)]
    return quads


def test_nested_subjects_of_a_new_root_are_not_looked_up(small_parts: int, tmp_path: Path) -> None:
    """``Change.nested``: in a graph the store holds, a new root's nested nodes are added after
    one lookup of the root; a held root's quads are still looked up one by one, so a quad held
    before is never written again (nor removed by a failed write), and the result equals the
    change written without ``nested``."""
    held_root = _decision("urn:kgr-test:d0", 3)
    with EmbeddedStore(tmp_path / "nested") as store, EmbeddedStore(tmp_path / "plain") as plain:
        for s in (store, plain):
            s.apply(Change(insert=held_root))          # the graph is held from now on
        new = _decision("urn:kgr-test:d1", 10) + _decision("urn:kgr-test:d2", 10)
        extra = Quad(NamedNode("urn:kgr-test:d0#c1"), P, Literal("more"), SHARED)
        change = [*new, held_root[1], extra]            # one held quad, one new under a held root
        counting = _LookupCountingEngine(store._store)
        store._store = counting  # type: ignore[assignment]
        store.apply(Change(insert=change, nested="#c"))
        plain.apply(Change(insert=change))
        assert {str(q) for q in counting._engine} == _all(plain)
        assert counting.subject_lookups == 3            # d1, d2, d0 (each once)
        assert counting.quad_lookups == 2               # the two quads under the held d0
        assert sum(n for _, n in counting.sizes) == len(new) + 1   # the held quad not written again
        # a failed write removes what it added and keeps what was there before
        engine = counting._engine
        store._store = engine
        before = _all(store)
        store._store = _FailingEngine(engine, fail_at=2)  # type: ignore[assignment]
        with pytest.raises(StoreError, match="nothing was written"):
            store.apply(Change(insert=[*held_root, *_decision("urn:kgr-test:d3", 10)], nested="#c"))
        store._store = engine
        assert _all(store) == before


def test_nested_survives_crossing_processes() -> None:
    import pickle

    c = Change(insert=_decision("urn:kgr-test:d1", 2), part=7, nested="#c")
    back = pickle.loads(pickle.dumps(c))
    assert (back.nested, back.part, back.insert) == ("#c", 7, c.insert)
