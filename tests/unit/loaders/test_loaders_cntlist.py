"""WordNet sense frequencies (cntlist.rev) as RDF: records keyed by sense key, joined to the senses
that carry that key by ``select-sense-counts``, whichever lexicon and whenever it was loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.errors import LoadError
from kg_rag.store import EmbeddedStore
from loaders import detect_format, list_sources, load_file
from tests.support.senses_fixture import EN, ILI, load_fixture

#: bank: 1 tag of the river sense, 9 of the money sense (in two lines: summed); a key no sense
#: of the fixture has; a key with no tag (left out)
CNTLIST = ("bank%1:14:00:: 1 1\nbank%1:17:01:: 2 4\nbank%1:17:01:: 2 5\nnowhere%1:01:00:: 1 5\n"
           "fabric%1:06:00:: 1 0\n")


def counts(store: EmbeddedStore) -> dict[tuple[str, str], int]:
    return {(r["sense"].value, r["concept"].value): int(r["count"].value)
            for r in store.select("select-sense-counts")}


def write(folder: Path, text: str, name: str = "wn30-cntlist.rev") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_counts_join_the_senses_by_sense_key_in_either_load_order(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    path = write(tmp_path, CNTLIST)
    assert detect_format(path) == "cntlist"
    rep = load_file(mem_store, path)
    assert rep.kind == "sense-counts" and rep.triples == 3 * 3  # three keys with a tag, 3 triples each
    [rec] = [r for r in list_sources(mem_store) if r.kind == "sense-counts"]
    assert rec.graph.endswith("/source/wn30-cntlist")
    assert counts(mem_store) == {}                  # no lexicon yet: nothing to join
    load_fixture(mem_store)                          # the lexicon after the counts
    assert counts(mem_store) == {(EN + "bank-n-1", ILI + "i1"): 1, (EN + "bank-n-2", ILI + "i2"): 9}


def test_a_malformed_line_is_a_load_error_naming_it(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    load_fixture(mem_store)
    path = write(tmp_path, "bank%1:14:00:: 1 1\nbank 2 x\n", "cntlist.rev")
    with pytest.raises(LoadError, match=r"cntlist.rev:2"):
        load_file(mem_store, path)
    assert counts(mem_store) == {}                   # nothing was written
    assert not [r for r in list_sources(mem_store) if r.kind == "sense-counts"]


def test_a_store_with_counts_loaded_conforms_to_its_shapes(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    """The catalog records the counts as source kind ``sense-counts``; the shapes once allowed
    only skos/ontolex/wn-lmf/dmlex/rdf, so a store with counts failed its own validation."""
    pytest.importorskip("pyshacl", reason="needs pyshacl")
    from kg_rag.pipeline.shapes import validate
    from kg_rag.resources import resource_path

    load_file(mem_store, resource_path("demo") / "dictionary.ttl")
    load_file(mem_store, write(tmp_path, CNTLIST))
    ok, report = validate(mem_store)
    assert ok, report
