"""One load may not send two different files into one source graph (the second would silently
replace the first): refused before anything is written; the same file twice is a reload. And a
Turtle (or N-Triples) file that starts with a UTF-8 byte-order mark loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import LoadError
from kg_rag.namespaces import SKOS
from kg_rag.store import EmbeddedStore
from loaders import check_targets, list_sources, load_file
from tests.support.paths import DATA

PREFIX = "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
GRAPH_T = "https://w3id.org/kg-rag/id/source/t"


def _concept(path: Path, name: str, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = PREFIX + f'<http://ex.org/{name}> a skos:Concept ; skos:prefLabel "{name}"@en .\n'
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _concepts(store: EmbeddedStore) -> set[str]:
    return {q.subject.value for q in store.oxigraph.quads_for_pattern(None, SKOS.prefLabel, None)}


def test_two_files_with_one_stem_are_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _concept(tmp_path / "a" / "t.ttl", "pear"), _concept(tmp_path / "b" / "t.ttl", "plum")
    store = tmp_path / "store"
    assert main(["--store", str(store), "load", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(a) in err and str(b) in err and f"<{GRAPH_T}>" in err and "--graph" in err
    assert not store.exists()      # nothing written, not even a new store


def test_the_api_refuses_them_too(tmp_path: Path) -> None:
    a, b = _concept(tmp_path / "a" / "t.ttl", "pear"), _concept(tmp_path / "b" / "t.ttl", "plum")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    with pytest.raises(LoadError, match="would both be loaded into"):
        kg.load([a, b])
    assert _concepts(kg.store) == set()      # type: ignore[arg-type]


def test_dmlex_xml_and_json_of_one_stem_are_refused(tmp_path: Path) -> None:
    xml, json = DATA / "dmlex" / "mini.dmlex.xml", DATA / "dmlex" / "mini.dmlex.json"
    with pytest.raises(LoadError, match="mini.dmlex.json would both be loaded into"):
        check_targets([xml, json])
    # loaded one at a time, the second replaces the first, as a reload does
    store = EmbeddedStore(":memory:")
    load_file(store, xml)
    load_file(store, json)
    assert [r.title for r in list_sources(store)] == ["mini.dmlex.json"]


def test_the_same_file_again_is_a_reload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _concept(tmp_path / "a" / "t.ttl", "pear")
    store = str(tmp_path / "store")
    same = str(tmp_path / "a" / ".." / "a" / "t.ttl")
    assert main(["--store", store, "load", str(a), same]) == 0
    assert main(["--store", store, "load", str(a)]) == 0
    link = tmp_path / "t-link.ttl"
    link.symlink_to(a)
    hard = tmp_path / "c" / "t.ttl"
    hard.parent.mkdir()
    hard.hardlink_to(a)
    assert [g.value for g in check_targets([a, hard, same])] == [GRAPH_T] * 3
    assert [g.value for g in check_targets([a, link])] == [GRAPH_T] * 2   # the file it points at
    capsys.readouterr()


def test_a_missing_file_is_refused_before_the_first_is_written(tmp_path: Path) -> None:
    a = _concept(tmp_path / "a" / "t.ttl", "pear")
    store = tmp_path / "store"
    assert main(["--store", str(store), "load", str(a), str(tmp_path / "nosuch.ttl")]) == 2
    assert not store.exists()


def test_different_stems_still_load_together(tmp_path: Path) -> None:
    a, b = _concept(tmp_path / "a" / "t.ttl", "pear"), _concept(tmp_path / "b" / "u.ttl", "plum")
    store = EmbeddedStore(":memory:")
    kg = KnowledgeGraph(store)
    assert [r.graph for r in kg.load([a, b])] == [GRAPH_T, GRAPH_T[:-1] + "u"]
    assert _concepts(store) == {"http://ex.org/pear", "http://ex.org/plum"}


# --- a byte-order mark --------------------------------------------------------------------------
def test_a_turtle_file_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    store = EmbeddedStore(":memory:")
    rep = load_file(store, _concept(tmp_path / "bom.ttl", "fig", bom=True))
    assert (rep.kind, rep.concepts) == ("skos", 1)
    assert _concepts(store) == {"http://ex.org/fig"}


@pytest.mark.parametrize("name", ["bom.nt", "bom.nq", "bom.trig", "bom.ttl.gz"])
def test_other_syntaxes_with_a_byte_order_mark_load(tmp_path: Path, name: str) -> None:
    import gzip

    line = b"<http://ex.org/fig> <http://www.w3.org/2004/02/skos/core#prefLabel> \"fig\"@en .\n"
    data = b"\xef\xbb\xbf" + (b"{ " + line + b"}\n" if name.endswith(".trig") else line)
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    store = EmbeddedStore(":memory:")
    load_file(store, path)
    assert _concepts(store) == {"http://ex.org/fig"}


def test_a_byte_order_mark_in_the_middle_is_still_an_error(tmp_path: Path) -> None:
    path = tmp_path / "middle.ttl"
    path.write_bytes(PREFIX.encode() + b"\xef\xbb\xbf<http://ex.org/a> <http://ex.org/b> <http://ex.org/c> .\n")
    with pytest.raises(LoadError, match="middle.ttl:2"):
        load_file(EmbeddedStore(":memory:"), path)


def test_loaded_separately_one_with_graph_both_are_kept(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """What the refusal suggests works."""
    a, b = _concept(tmp_path / "a" / "t.ttl", "pear"), _concept(tmp_path / "b" / "t.ttl", "plum")
    store = str(tmp_path / "store")
    assert main(["--store", store, "load", str(a)]) == 0
    assert main(["--store", store, "load", str(b), "--graph", "http://example.org/plum"]) == 0
    capsys.readouterr()
    with EmbeddedStore(store) as s:
        assert _concepts(s) == {"http://ex.org/pear", "http://ex.org/plum"}
        assert NamedNode("http://example.org/plum") in s.named_graphs()
