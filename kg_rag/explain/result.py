"""Why one document answered a question: the ranking replayed on the store.

``ask`` records the parameters its ranking ran with (a ``kgr:Retrieval`` in the question's graph:
``select-retrieval``). The explanation rebuilds the question's query concepts from its stored
mentions and decisions, expands them and scores the documents with the ranking's own code
(:func:`~kg_rag.pipeline.retrieve.question_concepts`, ``expand``, ``score``) and those parameters,
and shows the document's side from SPARQL (``construct-result-link``): its score, the
contributions that sum to it (as ``rank`` returned them), and each link from a question concept
to one of the document's annotations — its label-matching part (the question weight × the
expansion weight) and its sense-agreement part (the question's probability × the expansion
weight × the document decision's probability); rarity and the focus boost multiply every link
of a concept alike. A link whose agreement is 0 shows that the document's decision chose
another reading: it counted by label matching only.
"""

from __future__ import annotations

import logging
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
from kg_rag.model import Agent, Candidate, Mention, Selection
from kg_rag.namespaces import KGR, OA, PROV, RDF
from kg_rag.pipeline.ranking_config import MATCH_MODES, RetrievalConfig
from kg_rag.pipeline.relevance import expansions, relevance
from kg_rag.pipeline.retrieve import (
    QueryConcept,
    QuestionReading,
    Scores,
    document_readings,
    expand,
    focus_mentions,
    mention_reading,
    question_concepts,
    score,
)
from kg_rag.senses.mode import WsdMode
from kg_rag.serialize import contribution_dict
from kg_rag.store import Store, Values

log = logging.getLogger(__name__)

#: select-retrieval's scalar outputs → the property recorded
_RECORDED = {"version": KGR.rankingVersion, "match": KGR.matchMode, "wsd": KGR.wsdMode,
             "k": KGR.resultCount, "focusBoost": KGR.focusBoost,
             "focusStart": KGR.focusStart, "focusEnd": KGR.focusEnd,
             "sameMeaning": KGR.sameMeaning}


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
    recorded, record_triples = _recorded(store, question)
    config: RetrievalConfig = recorded["config"]
    mentions = sorted(base.summary["mentions"], key=lambda m: (m.get("start", 0), -m.get("end", 0)))
    readings = [_reading(m, recorded["wsd"]) for m in mentions]
    expanded = expand(store, question_concepts(readings, recorded["focus"]), config)
    link_triples = [Triple(NamedNode(c.source.iri), NamedNode(c.relation), NamedNode(c.iri))
                    for c in expanded if c.source is not None and c.relation is not None]
    doc_triples = store.construct(
        "construct-result-link", bind={"doc": NamedNode(document)},
        values=Values.column("concept", [NamedNode(c) for c in sorted(c.iri for c in expanded)]))
    if not doc_triples:
        raise NotFoundError(f"{document} has no annotation of the question's concepts or their "
                            f"neighbours: it is not a result of {question}")
    scores = score(store, expanded, config)
    triples = list(base.triples) + record_triples + link_triples + doc_triples
    summary = summarise(question, triples)
    summary["result"] = _links(store, summary, triples, document, expanded, mentions, scores,
                               config.match == "fused")
    summary["result"]["retrieval"] = {k: v for k, v in recorded.items() if k != "config"}
    focused = focus_mentions([(m.start, m.end) for m in readings], recorded["focus"])
    rel = relevance(readings, focused, expansions(expanded), scores, document, config.focus_boost)
    summary["result"]["relevance"] = rel.value
    summary["result"]["coverage"] = [
        {"text": m.get("text"), "start": m.get("start"), "end": m.get("end"), "coverage": c,
         "weight": w} for m, c, w in zip(mentions, rel.coverage, rel.weights, strict=True)]
    return Explanation(question, tuple(triples), summary)


def _recorded(store: Store, question: str) -> tuple[dict[str, Any], list[Triple]]:
    """The ranking parameters ``ask`` recorded with the question, and their triples."""
    rows = store.select("select-retrieval", bind={"question": NamedNode(question)})
    scalars = [r for r in rows if "version" in r]
    if not scalars:
        raise NotFoundError(f"{question} has no recorded ranking (it was only annotated, or asked "
                            f"before kg-rag recorded ranking parameters): ask it again, then explain")
    s = scalars[0]
    if s["match"].value not in MATCH_MODES:
        raise NotFoundError(f"{question} was ranked by an earlier arithmetic (match "
                            f"{s['match'].value!r}) that kg-rag no longer replays: ask it again, then explain")
    config = RetrievalConfig(
        expansion=tuple((r["relation"].value, float(r["weight"].value)) for r in rows if "relation" in r),
        same_meaning=tuple(r["sameMeaning"].value for r in rows if "sameMeaning" in r),
        focus_boost=float(s["focusBoost"].value), match=s["match"].value)
    if config.version != s["version"].value:
        log.warning("%s was ranked by version %s of the arithmetic; its parameters replay as %s",
                    question, s["version"].value, config.version)
    focus = (int(s["focusStart"].value), int(s["focusEnd"].value)) if "focusStart" in s else None
    retrieval = s["retrieval"]
    triples = [Triple(retrieval, RDF.type, KGR.Retrieval), Triple(retrieval, PROV.used, NamedNode(question))]
    for r in rows:
        triples += [Triple(retrieval, p, r[v]) for v, p in _RECORDED.items() if v in r]
        if "expansion" in r:
            x = r["expansion"]
            triples += [Triple(retrieval, KGR.expansionWeight, x), Triple(x, RDF.type, KGR.ExpansionWeight),
                        Triple(x, KGR.relation, r["relation"]), Triple(x, KGR.weight, r["weight"])]
    return {"config": config, "version": s["version"].value, "replayed_version": config.version,
            "wsd": s["wsd"].value, "k": int(s["k"].value), "focus": focus,
            "match": config.match, "expansion": dict(config.expansion),
            "focus_boost": config.focus_boost}, triples


def _reading(m: dict[str, Any], wsd: str) -> QuestionReading:
    """What a question mention looked for, by the rule ``ask`` used
    (:func:`~kg_rag.pipeline.retrieve.mention_reading`), on its stored annotation and decision."""
    dec = m.get("decision")
    selection = None
    if dec is None:
        cands = tuple(Candidate(c) for c in m["candidates"])
    else:
        cands = tuple(Candidate(c["concept"], c.get("sense")) for c in dec["candidates"])
        chosen = dec.get("chosen_concept")
        who = dec.get("selector") or {}
        selection = Selection(tuple((cand.id, c["score"]) for cand, c in zip(cands, dec["candidates"], strict=True)),
                              Candidate(chosen) if chosen else None, dec["confidence"],
                              Agent(who.get("label") or "", who.get("version") or ""))
    mention = Mention(m.get("start", 0), m.get("end", 0), m.get("text") or "", "", cands)
    return mention_reading(mention, selection, dec["iri"] if dec else None, wsd == WsdMode.NONE.value)


def _links(store: Store, summary: dict[str, Any], triples: list[Triple], doc: str, expanded: list[QueryConcept],
           mentions: list[dict[str, Any]], scores: Scores, fused: bool) -> dict[str, Any]:
    g = GraphIndex(triples)
    lang = summary.get("owner", {}).get("language", "en")
    by_iri = {c.iri: c for c in expanded}
    counted_by = document_readings(store, doc, scores.postings.get(doc, {}))   # concept → annotation → p
    links: list[dict[str, Any]] = []
    for target in g.subjects(OA.hasSource, doc):
        for ann in g.subjects(OA.hasTarget, target):
            span = target_span(g, target)
            dec = _document_decision(g, ann, lang)
            for dc in sorted(c.value for c in g.all(ann, KGR.candidateConcept)):
                doc_p = counted_by.get(dc, {}).get(ann)
                if doc_p is None or dc not in by_iri:
                    continue
                qc = by_iri[dc]
                src = qc.source or qc
                m = mentions[qc.mention] if qc.mention is not None else {}
                label = src.weight * qc.expansion_weight
                agreement = src.probability * qc.expansion_weight * doc_p if fused else 0.0
                links.append({
                    "question_mention": {"text": m.get("text"), "start": m.get("start"), "end": m.get("end")},
                    "question_concept": src.iri, "question_label": concept_label(g, src.iri, lang),
                    "question_weight": src.weight, "question_probability": src.probability if fused else 0.0,
                    "relation": qc.relation, "expansion_weight": qc.expansion_weight,
                    "document_mention": span, "document_annotation": ann,
                    "document_concept": dc, "document_label": concept_label(g, dc, lang),
                    "document_probability": doc_p if fused else None, "document_decision": dec,
                    "label": round(label, 6), "agreement": round(agreement, 6),
                    "counted": round(label + agreement, 6),
                })
    links.sort(key=lambda x: (-x["counted"], x["document_mention"].get("start", 0), x["question_concept"]))
    return {"document": doc, "score": round(scores.score(doc), 6),
            "contributions": [{**contribution_dict(c),
                               "question_label": concept_label(g, c.question_concept, lang),
                               "document_label": concept_label(g, c.document_concept, lang)}
                              for c in scores.contributions(doc)],
            "links": links}


def _document_decision(g: GraphIndex, ann: str, lang: str) -> dict[str, Any] | None:
    """A document annotation's decision (summary), None without one."""
    dec_iri = g.one(ann, KGR.decision)
    if not dec_iri or not g.one(dec_iri, KGR.status):
        return None
    return decision_summary(g, dec_iri, lang)
