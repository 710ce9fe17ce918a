"""The alignment graph: RDF of alignment runs and their links (ontology/DATA-MODEL.md,
"Alignments"). Everything here is built from terms; :mod:`kg_rag.align.review` applies it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.align.model import Proposal
from kg_rag.align.score import METHOD, version
from kg_rag.namespaces import DCT, ID, KGR, ONTOLEX, PROV, RDF, RDFS, SKOS, XSD

#: the one graph of alignment records and accepted links, apart from every loaded source
ALIGNMENTS_GRAPH = NamedNode(ID + "graph/alignments")
STATUSES = ("proposed", "accepted", "rejected")
#: what an accepted link states: a concept-less sense refers to the concept; a sense that
#: already has a concept (a wordnet synset) has that concept closely match it
REFERENCE = ONTOLEX.reference
CLOSE_MATCH = SKOS.closeMatch


def link_id(sense: str, concept: str) -> str:
    return hashlib.sha256(f"{sense}\n{concept}".encode()).hexdigest()[:24]


def link_iri(sense: str, concept: str) -> NamedNode:
    return NamedNode(ID + "alignment/" + link_id(sense, concept))


def run_iri(dictionary: str, thesaurus: str, started: str) -> NamedNode:
    h = hashlib.sha256(f"{dictionary}\n{thesaurus}\n{started}".encode()).hexdigest()[:24]
    return NamedNode(ID + "alignment-run/" + h)


def agent_iri() -> NamedNode:
    return NamedNode(ID + "agent/aligner-" + version())


def _dt(value: str) -> Literal:
    return Literal(value, datatype=XSD.dateTime)


def _double(value: float) -> Literal:
    return Literal(repr(float(value)), datatype=XSD.double)


def link_statement(sense: str, concept: str, sense_concept: str | None) -> Quad:
    """The statement an accepted link adds to the alignment graph."""
    if sense_concept:
        return Quad(NamedNode(sense_concept), CLOSE_MATCH, NamedNode(concept), ALIGNMENTS_GRAPH)
    return Quad(NamedNode(sense), REFERENCE, NamedNode(concept), ALIGNMENTS_GRAPH)


def proposal_quads(p: Proposal, run: NamedNode, dictionary: str, thesaurus: str) -> list[Quad]:
    g = ALIGNMENTS_GRAPH
    link = link_iri(p.sense, p.concept)
    ev = p.evidence
    quads = [
        Quad(link, RDF.type, KGR.Alignment, g),
        Quad(link, RDF.type, PROV.Entity, g),
        Quad(link, DCT.identifier, Literal(link_id(p.sense, p.concept)), g),
        Quad(link, KGR.alignedSense, NamedNode(p.sense), g),
        Quad(link, KGR.alignedConcept, NamedNode(p.concept), g),
        Quad(link, KGR.alignmentScore, _double(p.score), g),
        Quad(link, KGR.alignmentStatus, Literal("proposed"), g),
        Quad(link, KGR.alignmentMethod, Literal(METHOD), g),
        Quad(link, KGR.dictionarySource, NamedNode(dictionary), g),
        Quad(link, KGR.thesaurusSource, NamedNode(thesaurus), g),
        Quad(link, KGR.linkProperty, CLOSE_MATCH if p.sense_concept else REFERENCE, g),
        Quad(link, PROV.wasGeneratedBy, run, g),
        Quad(link, KGR.labelEvidence, _double(ev.label), g),
        Quad(link, KGR.glossOverlap, _double(ev.gloss), g),
        Quad(link, KGR.neighbourCount, Literal(ev.neighbours), g),
        Quad(link, KGR.candidateCount, Literal(p.candidates), g),
    ]
    if ev.match:
        quads.append(Quad(link, KGR.labelMatch, Literal(ev.match), g))
    if p.lemma:
        quads.append(Quad(link, KGR.writtenForm, Literal(p.lemma, language=p.lang) if p.lang
                          else Literal(p.lemma), g))
    if p.sense_concept:
        quads.append(Quad(link, KGR.senseConcept, NamedNode(p.sense_concept), g))
    quads += [Quad(link, KGR.agreeingLanguage, Literal(lang), g) for lang in ev.agreeing]
    quads += [Quad(link, KGR.disagreeingLanguage, Literal(lang), g) for lang in ev.disagreeing]
    return quads


def run_quads(run: NamedNode, dictionary: str, thesaurus: str, started: str, ended: str,
              senses: int, proposals: int) -> list[Quad]:
    g = ALIGNMENTS_GRAPH
    agent = agent_iri()
    return [
        Quad(run, RDF.type, KGR.AlignmentRun, g),
        Quad(run, RDF.type, PROV.Activity, g),
        Quad(run, PROV.used, NamedNode(dictionary), g),
        Quad(run, PROV.used, NamedNode(thesaurus), g),
        Quad(run, KGR.dictionarySource, NamedNode(dictionary), g),
        Quad(run, KGR.thesaurusSource, NamedNode(thesaurus), g),
        Quad(run, PROV.wasAssociatedWith, agent, g),
        Quad(run, PROV.startedAtTime, _dt(started), g),
        Quad(run, PROV.endedAtTime, _dt(ended), g),
        Quad(run, KGR.alignedSenseCount, Literal(senses), g),
        Quad(run, KGR.proposalCount, Literal(proposals), g),
        Quad(agent, RDF.type, PROV.SoftwareAgent, g),
        Quad(agent, RDFS.label, Literal("kg-rag aligner"), g),
        Quad(agent, KGR.version, Literal(version()), g),
        Quad(agent, KGR.alignmentMethod, Literal(METHOD), g),
    ]


def status_quads(link: NamedNode, old: str, new: str, when: str,
                 reviewed: Literal | None) -> tuple[list[Quad], list[Quad]]:
    """(delete, insert) that move a record from status ``old`` to ``new`` at ``when``."""
    g = ALIGNMENTS_GRAPH
    delete = [Quad(link, KGR.alignmentStatus, Literal(old), g)]
    if reviewed is not None:
        delete.append(Quad(link, KGR.reviewedAtTime, reviewed, g))
    insert = [Quad(link, KGR.alignmentStatus, Literal(new), g),
              Quad(link, KGR.reviewedAtTime, _dt(when), g)]
    return delete, insert


def quads_of(rows: Iterable[dict[str, object]]) -> list[Quad]:
    """Rows of ``select-alignment-statements`` as quads (to delete them)."""
    return [Quad(r["link"], r["p"], r["o"], ALIGNMENTS_GRAPH) for r in rows]  # type: ignore[arg-type]
