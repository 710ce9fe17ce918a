"""SKOS mapping relations: a thesaurus concept mapped to another scheme's concept retrieves the
documents annotated with either — at the focus weight for exactMatch/closeMatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.documents.readers import SourceDocument
from kg_rag.pipeline.ranking_config import EXPANSION
from kg_rag.pipeline.retrieve import QueryConcept, expand
from kg_rag.store import EmbeddedStore

A = "https://example.org/a/"
B = "https://example.org/b/"

SCHEMES = """
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix a: <https://example.org/a/> .
@prefix b: <https://example.org/b/> .
a:scheme a skos:ConceptScheme .
b:scheme a skos:ConceptScheme .
a:lighthouse a skos:Concept ; skos:inScheme a:scheme ; skos:prefLabel "lighthouse"@en .
a:harbour a skos:Concept ; skos:inScheme a:scheme ; skos:prefLabel "harbour"@en .
b:leuchtturm a skos:Concept ; skos:inScheme b:scheme ; skos:prefLabel "Leuchtturm"@de .
b:seezeichen a skos:Concept ; skos:inScheme b:scheme ; skos:prefLabel "Seezeichen"@de .
"""
MAPPINGS = """
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
<https://example.org/a/lighthouse> skos:exactMatch <https://example.org/b/leuchtturm> ;
    skos:broadMatch <https://example.org/b/seezeichen> .
"""
DOCS = [
    SourceDocument("de-tower", "Der Leuchtturm steht seit hundert Jahren.", "de"),
    SourceDocument("de-marks", "Jedes Seezeichen ist in der Karte verzeichnet.", "de"),
    SourceDocument("en-harbour", "The harbour was quiet.", "en"),
]


def _kg(tmp_path: Path, mapped: bool) -> KnowledgeGraph:
    files = [tmp_path / "schemes.ttl"]
    files[0].write_text(SCHEMES, encoding="utf-8")
    if mapped:
        files.append(tmp_path / "mappings.ttl")
        files[1].write_text(MAPPINGS, encoding="utf-8")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load(files)
    kg.index_documents(DOCS)
    return kg


@pytest.mark.parametrize("mapped", [False, True])
def test_exact_match_reaches_the_other_scheme(tmp_path: Path, mapped: bool) -> None:
    kg = _kg(tmp_path, mapped)
    a = kg.ask("Where is the lighthouse?", lang="en", focus=(13, 23))
    ids = [r.doc_id for r in a.results]
    if not mapped:
        assert ids == []          # labels in different languages and schemes never meet
        return
    assert ids == ["de-tower", "de-marks"]   # the exact match first, the broader mapping after
    tower, marks = a.results
    assert {c.iri for c in tower.concepts} == {B + "leuchtturm"}
    assert tower.score > 10 * marks.score   # the exact match carries the focus weight


def test_mappings_are_symmetric_and_inverse(tmp_path: Path) -> None:
    kg = _kg(tmp_path, mapped=True)
    out = {c.iri: c for c in expand(kg.store, [QueryConcept(B + "leuchtturm", 1.0, focus=True)])}
    assert out[A + "lighthouse"].weight == EXPANSION["exactMatch"] and out[A + "lighthouse"].focus
    out = {c.iri: c for c in expand(kg.store, [QueryConcept(B + "seezeichen", 1.0, focus=True)])}
    # b:seezeichen is the broad match of a:lighthouse, so a:lighthouse is its narrow match
    assert out[A + "lighthouse"].weight == EXPANSION["narrowMatch"] and not out[A + "lighthouse"].focus
