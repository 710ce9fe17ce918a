"""A new WordNet is written while it is mapped (loaders.streaming): the same triples as a source
mapped completely first, and on any failure — the file's or the store's — nothing left behind."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import BinaryIO

import pytest
from pyoxigraph import NamedNode, RdfFormat

from kg_rag.errors import LoadError, StoreError
from kg_rag.store import EmbeddedStore
from loaders import list_sources, load_file
from loaders.iris import source_graph_iri
from tests.support.paths import DATA

LMF = DATA / "loaders" / "mini-lmf.xml"


def _graph(store: EmbeddedStore, g: str) -> set[str]:
    return {str(q) for q in store.oxigraph.quads_for_pattern(None, None, None, NamedNode(g))}


def _mappers_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kg-rag-map"]


def test_streamed_load_equals_the_mapped_first_load() -> None:
    """A first load streams; loading the same file again replaces the graph the old way (map
    completely, then write): both give the same triples and the same report."""
    with EmbeddedStore(":memory:") as a, EmbeddedStore(":memory:") as b:
        first = load_file(a, LMF)
        load_file(b, LMF)
        again = load_file(b, LMF)
        assert _graph(a, first.graph) == _graph(b, again.graph)
        assert len(_graph(a, first.graph)) == first.triples == again.triples > 0
        assert (first.concepts, first.entries, first.senses) == (again.concepts, again.entries, again.senses)


def test_a_file_malformed_half_way_leaves_no_graph(tmp_path: Path) -> None:
    text = LMF.read_text(encoding="utf-8")
    cut = tmp_path / "cut.xml"
    cut.write_text(text[: text.rindex("</LexicalEntry>")] + "</Lexicon", encoding="utf-8")
    with EmbeddedStore(":memory:") as store:
        other = load_file(store, DATA / "loaders" / "mini-he.xml")
        before = len(store.oxigraph)
        with pytest.raises(LoadError, match=r"cut\.xml:\d+: not well-formed"):
            load_file(store, cut)
        assert NamedNode(source_graph_iri(cut)) not in store.named_graphs()
        assert len(store.oxigraph) == before
        assert [s.graph for s in list_sources(store)] == [other.graph]
    assert not _mappers_alive()


class _FailingStore(EmbeddedStore):
    """Reads a little of the stream, then fails as a full disk would."""

    def load_ntriples_stream(self, graph: NamedNode, stream: BinaryIO) -> None:
        self.oxigraph.bulk_load(stream.readline(), format=RdfFormat.N_TRIPLES, to_graph=graph)
        raise StoreError("the disk is full")


def test_a_store_failing_mid_stream_stops_the_mapper_and_leaves_no_graph(tmp_path: Path) -> None:
    # large enough (≈ 10 MB of N-Triples) that the mapper is still writing when the store fails
    big = tmp_path / "big.xml"
    entries = "\n".join(f'<LexicalEntry id="t-e{i}"><Lemma writtenForm="w{i}" partOfSpeech="n"/>'
                        f'<Sense id="t-e{i}-1" synset="t-s{i}"/></LexicalEntry>' for i in range(30_000))
    big.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<LexicalResource>\n<Lexicon id="t" '
                   'label="T" language="en" email="x@example.org" license="x" version="1">\n'
                   f'{entries}\n</Lexicon>\n</LexicalResource>\n', encoding="utf-8")
    with _FailingStore(":memory:") as store:
        with pytest.raises(StoreError, match="the disk is full"):
            load_file(store, big)
        assert store.named_graphs() == [] and len(store.oxigraph) == 0
    assert not _mappers_alive()
