"""Alignment on small hand-written sources: Hebrew written with niqqud against plain labels,
a sense that already has a concept (accepting states skos:closeMatch from it), one concept per
entry, and the label tiers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.align.labels import LabelIndex, _stem_related
from kg_rag.align.model import Label, ThesaurusConcept
from kg_rag.api import KnowledgeGraph
from kg_rag.store import EmbeddedStore

PREFIXES = """
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix ex: <http://example.org/> .
"""

THESAURUS = PREFIXES + """
ex:fabric a skos:Concept ; skos:prefLabel "בד"@he, "Textiles"@en ;
    skos:definition "Cloth woven from threads, sewn into clothes."@en ; skos:related ex:sewing .
ex:sewing a skos:Concept ; skos:prefLabel "sewing"@en ; skos:definition "Joining cloth with thread."@en .
ex:banks a skos:Concept ; skos:prefLabel "Banks"@en ;
    skos:scopeNote "Financial institutions that keep money and lend it."@en .
ex:rivers a skos:Concept ; skos:prefLabel "Rivers"@en ;
    skos:definition "Natural streams of water flowing to the sea."@en ; skos:narrower ex:banks-of-rivers .
ex:banks-of-rivers a skos:Concept ; skos:prefLabel "River banks"@en .
"""

DICTIONARY = PREFIXES + """
ex:bad a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "בַּד"@he ] ;
    ontolex:sense ex:bad-1 .
ex:bad-1 a ontolex:LexicalSense ;
    skos:definition "Cloth from threads, from which clothes are sewn; used in sewing."@en .
ex:bank a ontolex:LexicalEntry ; ontolex:canonicalForm [ ontolex:writtenRep "bank"@en ] ;
    ontolex:sense ex:bank-1, ex:bank-2 .
ex:bank-1 a ontolex:LexicalSense ; ontolex:isLexicalizedSenseOf ex:synset-river-bank .
ex:bank-2 a ontolex:LexicalSense ; ontolex:isLexicalizedSenseOf ex:synset-money-bank .
ex:synset-river-bank a ontolex:LexicalConcept ;
    skos:definition "Sloping land beside a body of water, such as rivers."@en .
ex:synset-money-bank a ontolex:LexicalConcept ;
    skos:definition "A financial institution that accepts deposits of money and lends money."@en .
"""


@pytest.fixture
def kg(tmp_path: Path) -> Iterator[KnowledgeGraph]:
    (tmp_path / "thes.ttl").write_text(THESAURUS, encoding="utf-8")
    (tmp_path / "dict.ttl").write_text(DICTIONARY, encoding="utf-8")
    k = KnowledgeGraph(EmbeddedStore(":memory:"))
    k.load([tmp_path / "thes.ttl", tmp_path / "dict.ttl"])
    yield k
    k.close()


def test_niqqud_and_lemmas_meet_plain_plural_labels(kg: KnowledgeGraph) -> None:
    report = kg.align("dict", "thes")
    by_sense = {p.sense.rsplit("/", 1)[-1]: p for p in report.proposals}
    assert by_sense["bad-1"].concept == "http://example.org/fabric"
    assert by_sense["bad-1"].evidence.match == "exact" and by_sense["bad-1"].evidence.neighbours == 1
    # one entry, one concept: only the money sense of "bank" gets "Banks" (lemma match)
    assert by_sense["bank-2"].concept == "http://example.org/banks"
    assert by_sense["bank-2"].evidence.match == "lemma"
    assert "bank-1" not in by_sense


def test_a_sense_with_a_concept_is_linked_by_close_match(kg: KnowledgeGraph) -> None:
    kg.align("dict", "thes")
    (link,) = [x for x in kg.alignments() if x.sense.endswith("bank-2")]
    assert link.relation.endswith("#closeMatch") and link.sense_concept == "http://example.org/synset-money-bank"
    kg.review_alignments([link.id], "accepted")
    text = kg.raw_query("ASK { GRAPH <https://w3id.org/kg-rag/id/graph/alignments> { "
                        "<http://example.org/synset-money-bank> skos:closeMatch <http://example.org/banks> } }")[0]
    assert b"true" in text
    # the sense itself keeps its synset: no ontolex:reference was stated for it
    (m,) = kg.annotate("bank", "en", wsd="none")
    assert {c.concept for c in m.mention.candidates} >= {"http://example.org/synset-money-bank"}


def test_label_tiers() -> None:
    assert _stem_related("restrain", "restraint") and not _stem_related("wild", "wilderness")
    assert not _stem_related("bar", "bark") and not _stem_related("fruit tree", "fruit trees")
    index = LabelIndex([ThesaurusConcept("c", (Label("forests", "en", "pref"), Label("wald", "de", "alt")))])
    assert index.hits("en", ["forest"])["c"].tier == "lemma"
    assert index.hits("de", ["wald"])["c"].strength == pytest.approx(0.8)
    assert index.hits("en", ["tree"]) == {}


def test_a_second_thesaurus_links_an_aligned_sense_by_close_match(kg: KnowledgeGraph, tmp_path: Path) -> None:
    (tmp_path / "other.ttl").write_text(PREFIXES + """
        <http://example.org/other/textiles> a skos:Concept ; skos:prefLabel "בד"@he, "fabric"@en ;
            skos:definition "Cloth woven from threads."@en .
        """, encoding="utf-8")
    kg.load([tmp_path / "other.ttl"])
    kg.align("dict", "thes")
    (first,) = [x for x in kg.alignments() if x.sense.endswith("bad-1")]
    kg.review_alignments([first.id], "accepted")
    report = kg.align("dict", "other")
    (p,) = [p for p in report.proposals if p.sense.endswith("bad-1")]
    assert p.concept == "http://example.org/other/textiles"
    assert p.sense_concept == "http://example.org/fabric"      # closeMatch from the accepted concept
    again = kg.align("dict", "thes")                            # aligned with thes already: skipped
    assert not [p for p in again.proposals if p.sense.endswith("bad-1")]
