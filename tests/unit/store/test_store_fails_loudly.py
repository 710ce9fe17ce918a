"""Opening stores fails loudly (issues 21/22): a folder that is not a store is never turned
into one, a store folder without its ``CURRENT`` file never reopens empty, a corrupted store file
is a one-line StoreError naming the store and what to do, and engine errors at read and write
time name the store too. An empty store says so instead of "no known concept"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.documents import SourceDocument
from kg_rag.errors import StoreError
from kg_rag.store import Change, EmbeddedStore
from tests.support.paths import DATA

G = NamedNode("urn:kgr-test:g")
P = NamedNode("urn:kgr-test:p")


def _listing(p: Path) -> dict[str, int]:
    return {f.name: f.stat().st_size for f in p.iterdir()}


def _store(path: Path, n: int = 1) -> None:
    s = EmbeddedStore(path)
    s.apply(Change(insert=[Quad(NamedNode(f"urn:kgr-test:s{i}"), P, Literal("x" * 60 + str(i)), G)
                           for i in range(n)]))
    if n > 1000:
        s.oxigraph.optimize()
    s.close()
    del s


def test_a_folder_that_is_not_a_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.txt").write_text("hello", encoding="utf-8")
    (folder / "b.md").write_text("world", encoding="utf-8")
    before = _listing(folder)
    with pytest.raises(StoreError) as e:
        EmbeddedStore(folder)
    assert str(e.value) == (f"{folder} is not a kg-rag store: 2 files; refusing to create one "
                            f"here (give --store a new or empty folder)")
    assert _listing(folder) == before


def test_a_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "store"
    f.write_text("x", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot open the store at .* it is a file, not a kg-rag store"):
        EmbeddedStore(f)


def test_a_new_or_empty_folder_becomes_a_store_and_reopens(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for p in (tmp_path / "new" / "deeper", tmp_path / "empty"):
        _store(p)
        again = EmbeddedStore(p)
        assert len(again.oxigraph) == 1
        again.close()


def test_a_store_without_current_is_an_error_not_a_new_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "store"
    _store(path, 50)
    (path / "CURRENT").unlink()
    for wal in path.glob("*.log"):  # without them the engine would silently start afresh
        wal.unlink()
    before = _listing(path)
    with pytest.raises(StoreError) as e:
        EmbeddedStore(path)
    msg = str(e.value)
    assert msg.startswith(f"the store at {path} is damaged: it has ") and "no CURRENT file" in msg
    assert "backup" in msg and "\n" not in msg
    assert _listing(path) == before  # nothing was created or changed


def _corrupt_footers(path: Path) -> None:
    for sst in path.glob("*.sst"):
        size = sst.stat().st_size
        with open(sst, "r+b") as f:
            f.seek(size - 8)
            f.write(b"\0" * 8)   # the table's magic number


def test_a_corrupted_store_file_is_one_line_naming_the_store(tmp_path: Path) -> None:
    path = tmp_path / "store"
    _store(path, 10)
    _corrupt_footers(path)
    with pytest.raises(StoreError) as e:
        EmbeddedStore(path)
    msg = str(e.value)
    assert msg.startswith(f"cannot open the store at {path}: Corruption: Bad table magic number")
    assert "restore it from a backup" in msg and "\n" not in msg


def test_the_cli_prints_one_line_and_exits_5(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    _store(path, 10)
    _corrupt_footers(path)
    assert main(["--store", str(path), "stats"]) == 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(path) in err
    assert "Bad table magic number" in err


def test_a_failed_write_names_the_store_and_writes_nothing(tmp_path: Path) -> None:
    """A file size limit makes the engine's log writes fail, as a full disk does."""
    path = tmp_path / "store"
    code = textwrap.dedent(f"""
        import resource, signal
        from pyoxigraph import Literal, NamedNode, Quad
        from kg_rag.errors import StoreError
        from kg_rag.store import Change, EmbeddedStore
        s = EmbeddedStore({str(path)!r})
        s.apply(Change(insert=[Quad(NamedNode("urn:a"), NamedNode("urn:b"), Literal("c"))]))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
        big = [Quad(NamedNode(f"urn:s{{i}}"), NamedNode("urn:p"), Literal("y" * 100))
               for i in range(3000)]
        try:
            s.apply(Change(insert=big))
        except StoreError as e:
            print("ERROR", e)
        print("COUNT", len(s.oxigraph))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])})
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["ERROR"].startswith(f"the update (nothing was written) failed on the store at {path}")
    assert "File too large" in lines["ERROR"]
    assert lines["COUNT"] == "1"


def test_an_empty_store_says_so_instead_of_no_known_concept(tmp_path: Path) -> None:
    for store in (EmbeddedStore(tmp_path / "missing"), EmbeddedStore(":memory:")):
        with KnowledgeGraph(store) as kg, pytest.raises(StoreError) as e:
            kg.ask("where is the bank?")
        assert "the store" in str(e.value) and "is empty: run `kg-rag demo` or `kg-rag load" in str(e.value)
    loaded = EmbeddedStore(":memory:")
    with KnowledgeGraph(loaded) as kg:
        kg.load([DATA / "loaders" / "skosxl.ttl"])
        answer = kg.ask("zzzz qqqq")    # a loaded store: an empty answer with its reason
        assert answer.results == () and "no known concept" in answer.reason


def test_documents_without_a_vocabulary_say_so_not_that_the_store_is_empty() -> None:
    from kg_rag.resources import resource_path

    with KnowledgeGraph(EmbeddedStore(":memory:")) as kg:
        demo = resource_path("demo")
        kg.load([demo / "thesaurus.ttl"])
        kg.index_documents([SourceDocument(id="d", text="A rooster crows.", lang="en")])
        for s in kg.sources():
            kg.drop_source(s["graph"])
        with pytest.raises(StoreError) as e:
            kg.ask("rooster")
        assert "holds 1 indexed document(s) but no vocabulary" in str(e.value)


def _corrupt_first_data_blocks(path: Path) -> None:
    """Bytes inside the first data block of each large table (one per index): the store still
    opens, and the engine finds the damage only when a query reads such a block, while its
    results are iterated."""
    for sst in path.glob("*.sst"):
        if sst.stat().st_size > 100_000:
            with open(sst, "r+b") as f:
                f.seek(10)
                f.write(b"\xff" * 20)


def test_damage_found_while_reading_results_is_one_line_naming_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # (no ORDER BY, GROUP BY or DISTINCT here: pyoxigraph 0.5.13 collects the damaged block's
    # endlessly repeated error into its sort buffer until the process aborts out of memory)
    path = tmp_path / "store"
    definition = NamedNode("http://www.w3.org/2004/02/skos/core#definition")
    s = EmbeddedStore(path)
    s.apply(Change(insert=[Quad(NamedNode(f"urn:kgr-test:c{i}"), definition,
                                Literal("a gloss " * 8 + str(i), language="en"), G)
                           for i in range(20_000)]))
    s.oxigraph.optimize()
    s.close()
    del s
    _corrupt_first_data_blocks(path)
    store = EmbeddedStore(path)   # opens: the damaged blocks are not read yet
    try:
        with pytest.raises(StoreError) as e:
            store.select("select-concept-glosses")   # a named query; its rows are read lazily
        msg = str(e.value)
        assert f"on the store at {path}" in msg and "Corruption" in msg
        assert "restore it from a backup" in msg and "\n" not in msg
        for fmt in ("json", "tsv"):
            with pytest.raises(StoreError, match="restore it from a backup"):
                store.raw_query("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", fmt)
        with pytest.raises(StoreError, match="restore it from a backup"):
            store.raw_query("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", "turtle")
    finally:
        store.close()
        del store
    assert main(["--store", str(path), "sparql", "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"]) == 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(path) in err
