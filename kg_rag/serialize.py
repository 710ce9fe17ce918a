"""Plain-JSON forms of answers and mention reports (CLI --json, REST API, LangChain metadata),
and of RDF terms as SPARQL 1.1 query results in JSON."""

from __future__ import annotations

from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from kg_rag.model import Answer, Candidate, Contribution, LanguageGuess, MentionReport, Result
from kg_rag.namespaces import XSD


def candidate_dict(c: Candidate, scores: dict[str, float] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"id": c.id, "concept": c.concept, "sense": c.sense, "lemma": c.lemma,
                         "lang": c.lang, "rank": c.rank, "sense_key": c.sense_key, "ili": c.ili,
                         "pos": c.pos, "matched_by": c.matched_by, "scheme": c.scheme,
                         "scheme_name": c.scheme_name, "scheme_source": c.scheme_source,
                         "source": c.source}
    if scores is not None:
        d["score"] = round(scores.get(c.id, 0.0), 6)
    return d


def mention_dict(r: MentionReport) -> dict[str, Any]:
    m = r.mention
    sel = r.selection
    scores = dict(sel.scores) if sel else None
    out: dict[str, Any] = {
        "text": m.text, "start": m.start, "end": m.end, "lang": m.lang, "ambiguous": m.ambiguous,
        "candidates": [candidate_dict(c, scores) for c in m.candidates],
        "same_meaning": [list(g) for g in m.same_meaning],
        "decision": r.decision, "reused": r.reused,
    }
    if sel is not None:
        out["chosen"] = candidate_dict(sel.chosen) if sel.chosen else None
        out["confidence"] = round(sel.confidence, 6)
        out["selector"] = {"name": sel.agent.name, "version": sel.agent.version, "model": sel.agent.model}
        if sel.reason:
            out["reason"] = sel.reason
        if sel.llm is not None:
            out["rationale"] = sel.llm.rationale
    elif not m.ambiguous and m.candidates:
        out["chosen"] = candidate_dict(m.candidates[0])
    return out


def contribution_dict(c: Contribution) -> dict[str, Any]:
    return {"question_concept": c.question_concept, "document_concept": c.document_concept,
            "relation": c.relation, "question_weight": round(c.question_weight, 6),
            "question_probability": round(c.question_probability, 6),
            "expansion_weight": c.expansion_weight, "focus_factor": c.focus_factor,
            "idf": round(c.idf, 6), "document_weight": round(c.document_weight, 6),
            "document_agreement": round(c.document_agreement, 6),
            "annotations": c.annotations, "counted": round(c.counted, 6)}


def result_dict(r: Result) -> dict[str, Any]:
    return {
        "id": r.doc_id, "iri": r.doc_iri, "relevance": r.relevance, "score": r.score,
        "lang": r.lang, "title": r.title,
        "passage": r.passage, "passage_start": r.passage_start,
        "highlights": [list(h) for h in r.highlights],
        "concepts": [{"iri": c.iri, "label": c.label, "weight": c.weight} for c in r.concepts],
        "decisions": list(r.decisions),
        "contributions": [contribution_dict(c) for c in r.contributions],
    }


def language_dict(g: LanguageGuess) -> dict[str, Any]:
    """How the language was decided: ``{"lang", "source", "langs", "note"}``."""
    return {"lang": g.lang, "source": g.source, "langs": list(g.langs), "note": g.note()}


def answer_dict(a: Answer) -> dict[str, Any]:
    return {
        "question": a.question, "question_iri": a.question_iri, "lang": a.lang,
        "language": language_dict(a.language) if a.language else None, "wsd": a.wsd.value,
        "mentions": [mention_dict(m) for m in a.mentions],
        "results": [result_dict(r) for r in a.results],
        "llm": {"calls": a.llm_calls, "tokens_in": a.tokens_in, "tokens_out": a.tokens_out},
        "timings_ms": {k: round(v, 2) for k, v in a.timings_ms.items()},
        "reason": a.reason,
    }


def json_term(t: Any) -> dict[str, Any]:
    """An RDF term as a SPARQL 1.1 JSON results binding (a quoted triple as SPARQL-star's
    ``"triple"``); ``TypeError`` for anything else."""
    if isinstance(t, NamedNode):
        return {"type": "uri", "value": t.value}
    if isinstance(t, BlankNode):
        return {"type": "bnode", "value": t.value}
    if isinstance(t, Literal):
        d: dict[str, Any] = {"type": "literal", "value": t.value}
        if t.language:
            d["xml:lang"] = t.language
        elif t.datatype != XSD.string:
            d["datatype"] = t.datatype.value
        return d
    if isinstance(t, Triple):
        return {"type": "triple", "value": {"subject": json_term(t.subject),
                                            "predicate": json_term(t.predicate),
                                            "object": json_term(t.object)}}
    raise TypeError(f"not an RDF term: {t!r}")
