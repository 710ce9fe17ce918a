"""The embedded store on disk: locking between processes, transactional updates, persistence."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from kg_rag.errors import StoreError, StoreLockedError
from kg_rag.store import Change, EmbeddedStore

G = NamedNode("urn:kgr-test:g")
H = NamedNode("urn:kgr-test:h")
P = NamedNode("urn:kgr-test:p")


def test_second_process_gets_store_locked_error(tmp_path: Path) -> None:
    path = tmp_path / "store"
    first = EmbeddedStore(path)
    first.apply(Change(insert=[Quad(G, P, Literal("x"), G)]))
    code = textwrap.dedent(f"""
        from kg_rag.errors import StoreLockedError
        from kg_rag.store import EmbeddedStore
        try:
            EmbeddedStore({str(path)!r})
        except StoreLockedError as e:
            print("LOCKED", e)
        else:
            print("OPENED")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("LOCKED"), out.stdout + out.stderr
    msg = out.stdout.removeprefix("LOCKED").strip()
    assert str(path) in msg and "--endpoint" in msg and "\n" not in msg
    first.close()


def test_second_open_in_the_same_process_is_locked(tmp_path: Path) -> None:
    path = tmp_path / "store"
    first = EmbeddedStore(path)
    with pytest.raises(StoreLockedError, match="in use"):
        EmbeddedStore(path)
    first.close()


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot open the store"):
        EmbeddedStore(f)


def test_store_persists_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "store"
    s = EmbeddedStore(path)
    s.load_graph(G, [Quad(G, P, Literal("kept"))])
    s.close()
    del s
    import gc

    gc.collect()
    again = EmbeddedStore(path)
    assert again.named_graphs() == [G]
    assert again.ask("ask-statement", bind={"o": Literal("kept")})


@pytest.mark.parametrize("failing", [
    "DROP GRAPH <urn:kgr-test:never-created>",
    "CREATE GRAPH <urn:kgr-test:h>",                 # exists by now (the INSERT made it)
])
def test_pyoxigraph_update_is_one_transaction(failing: str) -> None:
    """The Change design relies on this: DROP + INSERT DATA + a failing op writes nothing."""
    s = pyoxigraph.Store()
    s.update('INSERT DATA { GRAPH <urn:kgr-test:g> { <urn:kgr-test:a> <urn:kgr-test:p> "old" } }')
    before = set(s)
    with pytest.raises(RuntimeError):
        s.update('DROP GRAPH <urn:kgr-test:g> ; '
                 'INSERT DATA { GRAPH <urn:kgr-test:h> { <urn:kgr-test:a> <urn:kgr-test:p> "new" } } ; '
                 + failing)
    assert set(s) == before
    # and the same update without the failing op does all of it
    s.update('DROP GRAPH <urn:kgr-test:g> ; '
             'INSERT DATA { GRAPH <urn:kgr-test:h> { <urn:kgr-test:a> <urn:kgr-test:p> "new" } }')
    assert {q.graph_name for q in s} == {H}


def test_failing_update_on_disk_store_writes_nothing(tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "store")
    s.apply(Change(insert=[Quad(G, P, Literal("old"), G)]))
    with pytest.raises(StoreError, match="nothing was written"):
        s.execute_update(Change(drop_graphs=[G], insert=[Quad(H, P, Literal("new"), H)]).render()
                         + " ; DROP GRAPH <urn:kgr-test:never-created>")
    assert s.named_graphs() == [G]
    assert s.ask("ask-statement", bind={"o": Literal("old"), "g": G})


def test_bulk_load_path_replaces_the_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import kg_rag.store.embedded as embedded_mod

    monkeypatch.setattr(embedded_mod, "BULK_THRESHOLD", 3)   # take the bulk_extend path
    s = EmbeddedStore(tmp_path / "store")
    s.load_graph(G, [Quad(G, P, Literal(f"old{i}")) for i in range(10)])
    seen: list[int] = []
    assert s.load_graph(G, [Quad(G, P, Literal(f"new{i}")) for i in range(7)], progress=seen.append) == 7
    assert sum(seen) == 7
    got = {t.object.value for t in s.construct("construct-graph", bind={"g": G})}
    assert got == {f"new{i}" for i in range(7)}


def test_failed_load_removes_the_partial_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    s = EmbeddedStore(":memory:")
    s.load_graph(G, [Quad(G, P, Literal("old"))])

    def broken() -> object:
        yield Quad(G, P, Literal("new"))
        raise SyntaxError("the source broke half way")

    with pytest.raises(SyntaxError):
        s.load_graph(G, broken())  # type: ignore[arg-type]
    assert G not in s.named_graphs()


# --- a change's quads through the engine (extend) or its update --------------------------------

hostile = st.lists(st.sampled_from(list("\"'\\{}#<>@^?$;.\n\r\t ab") + ["\u05d1\u05bc", "\u202e",
                                                                       "\U0001F600", "\"\"\""]),
                   max_size=20).map("".join)


def _quads(values: list[tuple[str, str | None]], even: NamedNode | DefaultGraph) -> list[Quad]:
    """A quad per (text, kind): a literal with that language, none, or an integer; in ``G``
    and ``even`` by turns."""
    quads = []
    for i, (v, kind) in enumerate(values):
        if kind == "x-int":
            o = Literal(str(len(v)), datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
        else:
            o = Literal(v, language=kind) if kind else Literal(v)
        quads.append(Quad(NamedNode(f"urn:kgr-test:s{i}"), P, o, G if i % 2 else even))
    return quads


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(hostile, st.sampled_from([None, "en", "he", "x-int"])),
                       min_size=1, max_size=6))
def test_extend_writes_what_the_update_text_writes(values: list[tuple[str, str | None]]) -> None:
    quads = _quads(values, H)
    quads.append(Quad(NamedNode("urn:kgr-test:d"), P, Literal("default graph"), DefaultGraph()))
    change = Change(drop_graphs=[G, H], insert=quads)
    through_extend, through_text = EmbeddedStore(":memory:"), EmbeddedStore(":memory:")
    through_extend.apply(change)
    through_text.execute_update(change.render())
    assert set(through_extend.oxigraph) == set(through_text.oxigraph) == set(quads)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(hostile, st.sampled_from([None, "en", "he", "x-int"])),
                       min_size=0, max_size=6))
def test_a_change_crosses_processes_unchanged(values: list[tuple[str, str | None]]) -> None:
    """What ``index --workers`` relies on: a change pickled (as N-Quads) comes back equal."""
    quads = _quads(values, DefaultGraph())
    change = Change(drop_graphs=[G, H], delete=quads[:1], insert=quads, part=3)
    back = pickle.loads(pickle.dumps(change))
    assert back == change and back.insert == quads   # the same quads, in the same order


class _Spy:
    """The engine, recording which write method each write used."""

    def __init__(self, engine: pyoxigraph.Store) -> None:
        self.engine, self.calls = engine, []  # type: list[str]

    def __getattr__(self, name: str) -> object:
        if name in ("update", "extend"):
            self.calls.append(name)
        return getattr(self.engine, name)


def test_a_change_that_only_adds_goes_through_extend_else_through_its_update() -> None:
    s = EmbeddedStore(":memory:")
    spy = _Spy(s.oxigraph)
    s._store = spy  # type: ignore[assignment]
    s.apply(Change(drop_graphs=[G], insert=[Quad(G, P, Literal("one"), G)]))   # G is new
    assert spy.calls == ["extend"]
    s.apply(Change(drop_graphs=[G], insert=[Quad(G, P, Literal("two"), G)]))   # G exists now
    assert spy.calls == ["extend", "update"]
    assert {q.object for q in spy.engine} == {Literal("two")}                  # one replaced
    s.apply(Change(delete=[Quad(G, P, Literal("two"), G)], insert=[Quad(H, P, Literal("h"), H)]))
    assert spy.calls[-1] == "update" and {q.object for q in spy.engine} == {Literal("h")}
    # an empty graph exists too: dropping it is a change, so it goes through the update
    spy.engine.add_graph(NamedNode("urn:kgr-test:empty"))
    s.apply(Change(drop_graphs=[NamedNode("urn:kgr-test:empty")], insert=[Quad(G, P, G, G)]))
    assert spy.calls[-1] == "update"
    assert NamedNode("urn:kgr-test:empty") not in set(spy.engine.named_graphs())


def test_a_failing_extend_writes_nothing() -> None:
    """What the fast path relies on: pyoxigraph's extend is one transaction."""
    s = pyoxigraph.Store()
    s.add(Quad(G, P, Literal("old"), G))

    def quads() -> Iterator[Quad]:
        yield Quad(H, P, Literal("new"), H)
        raise OSError("the source broke")

    with pytest.raises(OSError):
        s.extend(quads())
    assert set(s) == {Quad(G, P, Literal("old"), G)}


def test_a_store_another_process_writes_is_not_opened_read_only(tmp_path: Path) -> None:
    """`serve --read-only` beside a running `index`: opening read-only while another process
    writes is undefined in the engine (seen here: the reader reported the store as damaged, an
    SST file gone under it). The writer's lock (Linux /proc/locks) is read without opening the
    LOCK file, and the read-only open refused in one line naming the writer; once it ends, the
    store opens."""
    import os
    import time

    from kg_rag.store.embedded import lock_holder

    path = tmp_path / "s"
    EmbeddedStore(path).close()
    import gc

    gc.collect()
    assert lock_holder(path / "LOCK") is None and lock_holder(tmp_path / "nothing") is None
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time, pyoxigraph
        s = pyoxigraph.Store(sys.argv[1])
        print("open", flush=True)
        sys.stdin.readline()
        """), str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "open"
        assert os.path.exists("/proc/locks"), "the project runs on Linux, whose kernel lists file locks there"
        assert lock_holder(path / "LOCK") == writer.pid
        # a kernel with no such table: nothing tells, and the open goes ahead as before
        assert lock_holder(path / "LOCK", tmp_path / "no-proc-locks") is None
        with pytest.raises(StoreLockedError, match=rf"being written by another process \(pid {writer.pid}\)"):
            EmbeddedStore(path, read_only=True)
    finally:
        assert writer.stdin is not None
        writer.stdin.write("\n")
        writer.stdin.close()
        writer.wait(timeout=30)
    deadline = time.monotonic() + 10
    while lock_holder(path / "LOCK") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    EmbeddedStore(path, read_only=True).close()
    # this process's own writer is not another process: nothing changes for it
    own = EmbeddedStore(path)
    try:
        assert lock_holder(path / "LOCK") is None
    finally:
        own.close()


def test_a_read_only_store_refuses_the_write_before_the_engine(tmp_path: Path) -> None:
    EmbeddedStore(tmp_path / "s").close()
    import gc

    gc.collect()
    ro = EmbeddedStore(tmp_path / "s", read_only=True)
    with pytest.raises(StoreError, match="read-only"):
        ro.apply(Change(insert=[Quad(G, P, Literal("x"), G)]))
    assert len(ro.oxigraph) == 0
