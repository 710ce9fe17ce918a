"""The embedded store on disk: locking between processes, transactional updates, persistence."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode, Quad

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
