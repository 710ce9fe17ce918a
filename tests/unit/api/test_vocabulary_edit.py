"""A user's SPARQL update that edits a vocabulary is followed like a load: the graphs it wrote
get their match keys recomputed and the catalog version moves, so the annotator finds a label
it added and not one it removed — in this process and in the next one, whose caches on disk
are keyed by that version (loaders/edit.py). An update of document graphs alone moves nothing."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from kg_rag import KnowledgeGraph, QueryError
from kg_rag.derived import catalog_version
from kg_rag.resources import resource_path
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
THESAURUS = "https://w3id.org/kg-rag/id/source/thesaurus"
BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"
SKOS = "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"


def open_kg(path: Path, cache: Path) -> KnowledgeGraph:
    return KnowledgeGraph(EmbeddedStore(str(path)), Settings(store=str(path), cache_dir=str(cache)))


def found(kg: KnowledgeGraph, text: str) -> dict[str, set[str]]:
    """Each mention's text → its candidate concepts (no selection, nothing recorded)."""
    return {r.mention.text: {c.concept for c in r.mention.candidates}
            for r in kg.annotate(text, lang="en", wsd="none", record_question=False)}


@pytest.fixture
def kg(tmp_path: Path) -> KnowledgeGraph:
    kg = open_kg(tmp_path / "store", tmp_path / "cache")
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def test_a_label_added_or_removed_by_an_update_is_annotated_accordingly_here_and_in_the_next_process(
        tmp_path: Path) -> None:
    kg = open_kg(tmp_path / "store", tmp_path / "cache")
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    text = "a bough and a twiglet"
    assert found(kg, text) == {"bough": {BRANCH}}        # the lexicon and its caches are built
    before = catalog_version(kg.store)

    kg.update(SKOS + f'INSERT DATA {{ GRAPH <{THESAURUS}> {{ <{BRANCH}> skos:altLabel "twiglet"@en }} }}')
    assert catalog_version(kg.store) != before
    assert found(kg, text) == {"bough": {BRANCH}, "twiglet": {BRANCH}}

    kg.update(SKOS + f'DELETE DATA {{ GRAPH <{THESAURUS}> {{ <{BRANCH}> skos:altLabel "bough"@en }} }}')
    assert found(kg, text) == {"twiglet": {BRANCH}}

    kg.store.close()
    del kg
    gc.collect()   # the engine releases the folder when the last reference goes
    later = open_kg(tmp_path / "store", tmp_path / "cache")   # a new process: caches from disk
    assert found(later, text) == {"twiglet": {BRANCH}}


def test_an_update_that_names_no_graph_it_writes_brings_every_vocabulary_graph_in_line(kg: KnowledgeGraph) -> None:
    assert "bough" in found(kg, "a bough")
    kg.update(SKOS + "DELETE { GRAPH ?g { ?c skos:altLabel ?l } } WHERE { GRAPH ?g { ?c skos:altLabel ?l } }")
    assert found(kg, "a bough") == {}
    assert "branch" in found(kg, "a branch")              # preferred labels stay


def test_an_update_of_document_graphs_alone_keeps_the_catalog_version(kg: KnowledgeGraph) -> None:
    found(kg, "a bough")
    before = catalog_version(kg.store)
    kg.update('INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/x> { <urn:a> <urn:b> "c" } }')
    assert catalog_version(kg.store) == before


def test_a_failed_update_writes_nothing_and_keeps_the_catalog_version(kg: KnowledgeGraph) -> None:
    before = catalog_version(kg.store)
    with pytest.raises(QueryError):
        kg.update(f'INSERT DATA {{ GRAPH <{THESAURUS}> {{ <{BRANCH}> undeclared:p "x" }} }}')
    assert catalog_version(kg.store) == before
