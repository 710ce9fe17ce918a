"""Why one document answered a question, from SPARQL: the question's explanation graph, the
links from its candidate concepts to the document's (the same concept, or one expansion or
mapping step: ``select-concept-neighbours``), and the document's annotations of those concepts
with their decisions (``construct-result-link``).

Each link says how much it counted, with the arithmetic of :mod:`.retrieve`: the question
reading's weight × the expansion weight × the document reading's weight
(:func:`~kg_rag.pipeline.retrieve.reading_weights` on both sides; concept rarity and the focus boost
multiply every link of a concept alike and are left out). A link that counted 0 is shown too —
a confident document decision for another reading is why a document did *not* come back.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pyoxigraph import NamedNode, Triple

from kg_rag.errors import InputError, NotFoundError
from kg_rag.explain.question import (
    Explanation,
    GraphIndex,
    concept_label,
    decision_summary,
    explain,
    summarise,
    target_span,
)
from kg_rag.namespaces import KGR, OA
from kg_rag.pipeline.retrieve import EXPANSION, question_weights, reading_weights
from kg_rag.store import Store, Values


def explain_result(store: Store, question: str, document: str) -> Explanation:
    """The explanation of ``question`` plus why ``document`` (its IRI) matched it."""
    for iri in (question, document):
        if not iri.startswith(("http://", "https://", "urn:")):
            raise InputError(f"explain needs IRIs (a question_iri and a result's doc_iri), not {iri!r}")
        try:
            NamedNode(iri)
        except ValueError:
            raise InputError(f"{iri!r} is not a valid IRI") from None
    base = explain(store, question)
    if base.summary.get("owner", {}).get("kind") != "Question":
        raise InputError(f"{question} is not a question: a result is explained from the question "
                         f"that retrieved it (the question_iri of the answer)")
    mentions = base.summary["mentions"]
    asked = {c for m in mentions for c in m["candidates"]}
    # concept of the document → [(question concept, relation IRI or None for the same concept)]
    reach: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
    for c in asked:
        reach[c].append((c, None))
    link_triples: list[Triple] = []
    if asked:
        rows = store.select("select-concept-neighbours",
                            values=Values.column("concept", [NamedNode(c) for c in sorted(asked)]))
        for r in rows:
            rel = r["rel"].value
            if EXPANSION.get(_local(rel), 0.0) <= 0:
                continue
            reach[r["neighbour"].value].append((r["concept"].value, rel))
            link_triples.append(Triple(r["concept"], NamedNode(rel), r["neighbour"]))
    doc_triples = store.construct(
        "construct-result-link", bind={"doc": NamedNode(document)},
        values=Values.column("concept", [NamedNode(c) for c in sorted(reach)]))
    if not doc_triples:
        raise NotFoundError(f"{document} has no annotation of the question's concepts or their "
                            f"neighbours: it is not a result of {question}")
    triples = list(base.triples) + link_triples + doc_triples
    summary = summarise(question, triples)
    summary["result"] = _links(summary, triples, document, reach)
    return Explanation(question, tuple(triples), summary)


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _question_weights(m: dict[str, Any]) -> dict[str, float]:
    """What a question mention looked for, from its explanation (its decision, if any)."""
    dec = m.get("decision")
    if dec is None:
        return question_weights(m["candidates"], None)
    return question_weights(m["candidates"], _scores(dec), dec.get("chosen_concept"), dec["confidence"])


def _scores(dec: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for c in dec["candidates"]:
        out[c["concept"]] += c["score"]
    return dict(out)


def _links(summary: dict[str, Any], triples: list[Triple], doc: str,
           reach: dict[str, list[tuple[str, str | None]]]) -> dict[str, Any]:
    g = GraphIndex(triples)
    lang = summary.get("owner", {}).get("language", "en")
    looked_for: dict[str, list[tuple[dict[str, Any], float]]] = defaultdict(list)
    for m in summary["mentions"]:
        for c, w in _question_weights(m).items():
            looked_for[c].append((m, w))
    links: list[dict[str, Any]] = []
    for target in g.subjects(OA.hasSource, doc):
        for ann in g.subjects(OA.hasTarget, target):
            span = target_span(g, target)
            dec, doc_w = _document_reading(g, ann, lang)
            pairs = [(d, q, r) for d in doc_w for q, r in reach.get(d, ())]
            for dc, qc, rel in pairs:
                factor = 1.0 if rel is None else EXPANSION.get(_local(rel), 0.0)
                for m, qw in looked_for.get(qc, ()):
                    links.append({
                        "question_mention": {"text": m.get("text"), "start": m.get("start"), "end": m.get("end")},
                        "question_concept": qc, "question_label": concept_label(g, qc, lang), "question_weight": qw,
                        "relation": rel, "expansion_weight": factor,
                        "document_mention": span, "document_annotation": ann,
                        "document_concept": dc, "document_label": concept_label(g, dc, lang),
                        "document_weight": doc_w[dc], "document_decision": dec,
                        "counted": round(qw * factor * doc_w[dc], 6),
                    })
    links.sort(key=lambda x: (-x["counted"], x["document_mention"].get("start", 0), x["question_concept"]))
    return {"document": doc, "links": links}


def _document_reading(g: GraphIndex, ann: str, lang: str) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """A document annotation's decision (summary) and how much it counts for each candidate
    concept (:func:`reading_weights`, document side; 1 each without a decision)."""
    cands = [c.value for c in g.all(ann, KGR.candidateConcept)]
    dec_iri = g.one(ann, KGR.decision)
    if not dec_iri or not g.one(dec_iri, KGR.status):
        return None, {c: 1.0 for c in cands}
    dec = decision_summary(g, dec_iri, lang)
    w = reading_weights(_scores(dec), dec.get("chosen_concept"), dec["confidence"], document=True)
    return dec, {c: w.get(c, 0.0) for c in cands}
