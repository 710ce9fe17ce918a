"""Two thesauri: the first one's concepts aligned with the second's (issue 16 item 5, "or
proposed by the aligner"); an accepted link is skos:closeMatch, so the two concepts are one
meaning in annotation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError
from kg_rag.store import EmbeddedStore

ECON = """
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix e: <https://example.org/econ/> .
e:s a skos:ConceptScheme .
e:inflation a skos:Concept ; skos:inScheme e:s ; skos:prefLabel "Inflation"@de, "inflation"@en ;
    skos:broader e:prices .
e:prices a skos:Concept ; skos:inScheme e:s ; skos:prefLabel "Preis"@de, "price"@en ; skos:altLabel "Preise"@de .
e:bank a skos:Concept ; skos:inScheme e:s ; skos:prefLabel "Bank"@de, "bank"@en ;
    skos:scopeNote "Kreditinstitut, das Einlagen annimmt und Kredite vergibt"@de .
e:mergers a skos:Concept ; skos:inScheme e:s ; skos:prefLabel "Fusion"@de, "merger"@en .
e:tariff a skos:Concept ; skos:inScheme e:s ; skos:prefLabel "Zoll"@de, "customs duty"@en .
"""

UN = """
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix u: <https://example.org/un/> .
u:s a skos:ConceptScheme .
u:inflation a skos:Concept ; skos:inScheme u:s ; skos:prefLabel "Inflation"@en, "inflation"@fr ;
    skos:broader u:prices .
u:prices a skos:Concept ; skos:inScheme u:s ; skos:prefLabel "Prices"@en, "prix"@fr .
u:banks a skos:Concept ; skos:inScheme u:s ; skos:prefLabel "Banks"@en, "banque"@fr ;
    skos:scopeNote "Financial institutions that accept deposits and make loans"@en .
u:river a skos:Concept ; skos:inScheme u:s ; skos:prefLabel "Rivers"@en, "fleuve"@fr .
u:poetry a skos:Concept ; skos:inScheme u:s ; skos:prefLabel "Poetry"@en, "poésie"@fr .
"""


@pytest.fixture
def kg(tmp_path: Path) -> Iterator[KnowledgeGraph]:
    (tmp_path / "econ.ttl").write_text(ECON, encoding="utf-8")
    (tmp_path / "un.ttl").write_text(UN, encoding="utf-8")
    k = KnowledgeGraph(EmbeddedStore(":memory:"))
    k.load([tmp_path / "econ.ttl", tmp_path / "un.ttl"])
    yield k
    k.close()


def test_concepts_of_one_thesaurus_are_aligned_with_another(kg: KnowledgeGraph) -> None:
    rep = kg.align("econ", "un")
    got = {(p.sense.rsplit("/", 1)[-1], p.concept.rsplit("/", 1)[-1]) for p in rep.proposals}
    assert got == {("inflation", "inflation"), ("prices", "prices"), ("bank", "banks")}
    assert rep.senses == 5 and rep.with_candidates == 3
    # the link of a concept is skos:closeMatch (the "sense" already has its concept: itself)
    assert {p.sense_concept for p in rep.proposals} == {p.sense for p in rep.proposals}
    by = {p.sense.rsplit("/", 1)[-1]: p for p in rep.proposals}
    assert by["inflation"].evidence.agreeing == ("en",) and by["inflation"].score > 0.8
    assert by["bank"].evidence.match == "lemma"          # bank ~ Banks


def test_an_accepted_link_makes_the_two_one_meaning(kg: KnowledgeGraph) -> None:
    text = "Inflation is rising"
    (before,) = kg.annotate(text, lang="en")
    assert before.mention.ambiguous and len(before.mention.concepts) == 2
    kg.align("econ", "un")
    [link] = [x for x in kg.alignments("proposed") if x.concept.endswith("/inflation")]
    assert link.relation.endswith("closeMatch")
    kg.review_alignments([link.id])
    (after,) = kg.annotate(text, lang="en")
    assert not after.mention.ambiguous and set(after.mention.concepts) == set(before.mention.concepts)


def test_a_source_that_is_neither_is_refused(kg: KnowledgeGraph, tmp_path: Path) -> None:
    (tmp_path / "plain.ttl").write_text("<https://example.org/a> <https://example.org/b> \"c\" .\n",
                                        encoding="utf-8")
    kg.load([tmp_path / "plain.ttl"])
    with pytest.raises(InputError, match="no lexical entry with senses and no skos:Concept"):
        kg.align("plain", "un")
    assert kg.alignments() == []
