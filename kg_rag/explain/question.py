"""Explain a question, document, annotation or decision from SPARQL alone.

Four CONSTRUCTs (``sparql/construct-explanation-{owner,decisions,concepts,documents}.rq``,
:data:`PARTS`), each bound to the root, fetch the chain question → mention → candidates with
scores → decision and selector → concept → documents and passages; this module only reads their
union into a summary (dict) and readable text.
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pyoxigraph
from pyoxigraph import NamedNode, Triple

from kg_rag.errors import InputError, NotFoundError
from kg_rag.namespaces import DCT, KGR, OA, PREFIXES, PROV, RDF, RDFS, SKOS
from kg_rag.store import Store
from kg_rag.text.normalise import base_language, for_terminal


@dataclass(frozen=True, slots=True)
class Explanation:
    root: str
    triples: tuple[Triple, ...]
    summary: dict[str, Any]

    def jsonld(self) -> str:
        buf = io.BytesIO()
        pyoxigraph.serialize(self.triples, buf, pyoxigraph.RdfFormat.JSON_LD)
        return buf.getvalue().decode("utf-8")

    def turtle(self) -> str:
        buf = io.BytesIO()
        pyoxigraph.serialize(self.triples, buf, pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
        return buf.getvalue().decode("utf-8")

    def text(self) -> str:
        return render_text(self.summary)


class GraphIndex:
    """The explanation triples indexed by subject+predicate and predicate+object."""

    def __init__(self, triples: list[Triple]) -> None:
        self.by_sp: dict[tuple[str, str], list[Any]] = defaultdict(list)
        self.by_po: dict[tuple[str, str], list[str]] = defaultdict(list)
        for t in triples:
            s = str(getattr(t.subject, "value", t.subject))
            self.by_sp[(s, t.predicate.value)].append(t.object)
            if isinstance(t.object, NamedNode):
                self.by_po[(t.predicate.value, t.object.value)].append(s)

    def all(self, s: str, p: NamedNode) -> list[Any]:
        return self.by_sp.get((s, p.value), [])

    def one(self, s: str, p: NamedNode) -> Any:
        v = self.all(s, p)
        return v[0].value if v else None

    def subjects(self, p: NamedNode, o: str) -> list[str]:
        return sorted(set(self.by_po.get((p.value, o), [])))


def concept_label(g: GraphIndex, concept: str, lang: str) -> str:
    labels = g.all(concept, SKOS.prefLabel)
    for want in (lang, "en"):
        for lab in labels:
            if base_language(lab.language) == want:
                return str(lab.value)
    return str(labels[0].value) if labels else concept.rsplit("/", 1)[-1]


def _definition(g: GraphIndex, concept: str, lang: str) -> str:
    defs = g.all(concept, SKOS.definition)
    for want in (lang, "en"):
        for d in defs:
            if base_language(getattr(d, "language", None)) == want:
                return str(d.value)
    return str(defs[0].value) if defs else ""


def decision_summary(g: GraphIndex, dec: str, lang: str) -> dict[str, Any]:
    agent = g.one(dec, PROV.wasAssociatedWith)
    cands = []
    for c in g.all(dec, KGR.candidate):
        concept = g.one(c.value, KGR.concept)
        cands.append({
            "concept": concept, "sense": g.one(c.value, KGR.sense),
            "label": concept_label(g, concept, lang), "definition": _definition(g, concept, lang),
            "score": float(g.one(c.value, KGR.score) or 0),
        })
    # a candidate's rank is its place in the order of the scores (ties: by concept IRI); the
    # decision records no rank (ontology/DATA-MODEL.md)
    cands.sort(key=lambda x: (-x["score"], x["concept"] or ""))
    for i, c in enumerate(cands, 1):
        c["rank"] = i
    out: dict[str, Any] = {
        "iri": dec, "status": g.one(dec, KGR.status), "confidence": float(g.one(dec, KGR.confidence) or 0),
        "chosen_concept": g.one(dec, KGR.chosenConcept), "chosen_sense": g.one(dec, KGR.chosenSense),
        "reason": g.one(dec, KGR.reason), "started": g.one(dec, PROV.startedAtTime),
        "revision_of": g.one(dec, KGR.revisionOf),   # kg-rag redecide: the decision it replaced
        "candidates": cands,
        "selector": {"iri": agent, "label": g.one(agent, RDFS.label) if agent else None,
                     "version": g.one(agent, KGR.version) if agent else None,
                     "model": g.one(agent, KGR.model) if agent else None,
                     "endpoint_host": g.one(agent, KGR.endpointHost) if agent else None},
    }
    if g.one(dec, KGR.promptSha256):
        out["llm"] = {"template": g.one(dec, KGR.promptTemplate), "prompt_sha256": g.one(dec, KGR.promptSha256),
                      "tokens_in": int(g.one(dec, KGR.tokensIn) or 0), "tokens_out": int(g.one(dec, KGR.tokensOut) or 0),
                      "latency_ms": float(g.one(dec, KGR.latencyMs) or 0), "rationale": g.one(dec, KGR.rationale)}
    if out["chosen_concept"]:
        out["chosen_label"] = concept_label(g, out["chosen_concept"], lang)
    return out


def target_span(g: GraphIndex, target: str) -> dict[str, Any]:
    """``text``, ``start`` and ``end`` of an annotation target (its quote and position selectors)."""
    span: dict[str, Any] = {}
    for sel in g.all(target, OA.hasSelector):
        if g.one(sel.value, OA.exact) is not None:
            span["text"] = g.one(sel.value, OA.exact)
        if g.one(sel.value, OA.start) is not None:
            span["start"], span["end"] = int(g.one(sel.value, OA.start)), int(g.one(sel.value, OA.end))
    return span


def summarise(root: str, triples: list[Triple]) -> dict[str, Any]:
    g = GraphIndex(triples)
    owners = [s for (s, p), _ in g.by_sp.items() if p == KGR.text.value]
    owner = owners[0] if owners else None
    lang = base_language(g.one(owner, DCT.language)) if owner else "en"
    summary: dict[str, Any] = {"root": root}
    if owner:
        summary["owner"] = {"iri": owner, "id": g.one(owner, DCT.identifier), "language": lang,
                            "kind": (g.one(owner, RDF.type) or "").rsplit("#", 1)[-1],
                            "text": g.one(owner, KGR.text)}
    mentions = []
    for ann in sorted({s for (s, p), _ in g.by_sp.items() if p == OA.hasTarget.value}):
        t = g.one(ann, OA.hasTarget)
        if g.one(t, OA.hasSource) != owner:
            continue
        m: dict[str, Any] = {"annotation": ann, **target_span(g, t)}
        m["candidates"] = sorted({c.value for c in g.all(ann, KGR.candidateConcept)})
        m["concepts"] = [{"iri": b.value, "label": concept_label(g, b.value, lang)} for b in g.all(ann, OA.hasBody)]
        dec = g.one(ann, KGR.decision)
        if dec:
            m["decision"] = decision_summary(g, dec, lang)
            m["decision"]["reused"] = g.one(ann, KGR.decisionReused) is not None
        mentions.append(m)
    mentions.sort(key=lambda m: m.get("start", 0))
    summary["mentions"] = mentions
    if g.all(root, KGR.status):  # the root is a decision
        summary["decision"] = decision_summary(g, root, lang)
    docs = []
    for d in sorted({s for (s, p), _ in g.by_sp.items() if p == RDF.type.value
                     and any(o.value == KGR.Document.value for o in g.all(s, RDF.type))}):
        if d == owner:
            continue
        concepts = sorted({b.value for a in g.subjects(OA.hasSource, d)
                           for ann in g.subjects(OA.hasTarget, a) for b in g.all(ann, OA.hasBody)})
        docs.append({"iri": d, "id": g.one(d, DCT.identifier), "title": g.one(d, DCT.title),
                     "language": g.one(d, DCT.language),
                     "concepts": [{"iri": c, "label": concept_label(g, c, lang)} for c in concepts]})
    summary["documents"] = docs
    return summary


#: the explanation graph's parts, one query each: as one query (a UNION of the four) the engine
#: evaluated every branch before joining the root (0.5–1 s per explanation on the demo store)
PARTS = ("construct-explanation-owner", "construct-explanation-decisions",
         "construct-explanation-concepts", "construct-explanation-documents")


def explain(store: Store, iri: str) -> Explanation:
    if not iri.startswith(("http://", "https://", "urn:")):
        raise InputError(f"explain needs an IRI (http://, https:// or urn:), not {iri!r}")
    root = NamedNode(iri)
    triples = list(dict.fromkeys(t for part in PARTS for t in store.construct(part, bind={"root": root})))
    if not triples:
        raise NotFoundError(f"nothing to explain for {iri}: not a question, document, annotation "
                            f"or decision in this store")
    return Explanation(iri, tuple(triples), summarise(iri, triples))


def render_text(s: dict[str, Any]) -> str:
    """Readable for a terminal: NFC, no raw bidi controls."""
    lines: list[str] = []
    owner = s.get("owner")
    if owner:
        lines.append(f"{owner['kind']} {owner['id']} [{owner['language']}]: {owner['text']}")
        lines.append(f"  <{owner['iri']}>")
    for m in s.get("mentions", []):
        lines.append(f"- mention “{m.get('text', '')}” [{m.get('start')}–{m.get('end')}]")
        dec = m.get("decision")
        if dec:
            sel = dec["selector"]
            who = sel["label"] or "selector"
            if sel.get("model"):
                who += f" (model {sel['model']} at {sel.get('endpoint_host') or '?'})"
            lines.append(f"    decision <{dec['iri']}> by {who} v{sel['version']}: {dec['status']}, "
                         f"confidence {dec['confidence']:.2f}" + (" (reused)" if dec.get("reused") else ""))
            for c in dec["candidates"]:
                mark = "→" if c["concept"] == dec.get("chosen_concept") else " "
                lines.append(f"     {mark} {c['score']:.3f} {c['label']}: {c['definition'][:100]}")
            if dec.get("revision_of"):
                lines.append(f"    re-decided; revises <{dec['revision_of']}>")
            if dec.get("reason"):
                lines.append(f"    reason: {dec['reason']}")
            if dec.get("llm"):
                llm = dec["llm"]
                lines.append(f"    prompt {llm['template']} sha256 {llm['prompt_sha256'][:16]}…, tokens "
                             f"{llm['tokens_in']} in / {llm['tokens_out']} out, {llm['latency_ms']:.0f} ms")
                if llm.get("rationale"):
                    lines.append(f"    rationale: {llm['rationale']}")
        for c in m.get("concepts", []):
            lines.append(f"    concept: {c['label']} <{c['iri']}>")
    if s.get("decision"):
        d = s["decision"]
        lines.append(f"decision <{d['iri']}>: {d['status']}, chosen {d.get('chosen_label')}")
    result = s.get("result")
    for d in s.get("documents", []):
        if result is not None and d["iri"] != result["document"]:
            continue
        labels = ", ".join(c["label"] for c in d["concepts"])
        lines.append(f"document {d['id']} [{d['language']}] {d.get('title') or ''} — via {labels}")
    if result is not None and "relevance" in result:
        parts = ", ".join(f"“{c['text']}” {c['coverage']:.2f}" + (f" (focus ×{c['weight']:g})" if c["weight"] != 1 else "")
                          for c in result.get("coverage", []))
        lines.append(f"relevance {result['relevance']:.2f}: the expected share of the question's words whose "
                     f"meaning the document shares — {parts}")
    if result is not None:
        r = result.get("retrieval") or {}
        lines.append(f"score {result['score']:.3f}, ranked by arithmetic {r.get('version')} (match "
                     f"{r.get('match')}, focus boost {r.get('focus_boost')}, "
                     f"{sum(1 for w in (r.get('expansion') or {}).values() if w > 0)} expansion relations) "
                     f"= the sum of expansion × focus × rarity × (label matching: question weight × "
                     f"document annotations + sense agreement: question probability × document "
                     f"probabilities):")
        for c in result.get("contributions", []):
            how = "same concept" if c["relation"] is None else c["relation"].rsplit("#", 1)[-1]
            lines.append(f"  {c['counted']:.3f} = {c['expansion_weight']:.2f} {how} × {c['focus_factor']:g} × "
                         f"{c['idf']:.2f} × ({c['question_weight']:.2f} × {c['document_weight']:.2f} + "
                         f"{c['question_probability']:.2f} × {c['document_agreement']:.2f}) "
                         f"{c['question_label']} → {c['document_label']} ({c['annotations']} annotations)")
        lines.append("why it answered (per annotation: label part + agreement part, before focus and rarity):")
        for x in result["links"]:
            how = "same concept" if x["relation"] is None else x["relation"].rsplit("#", 1)[-1]
            dm = x["document_mention"]
            dec = x["document_decision"]
            chose = (f"; its decision chose {dec.get('chosen_label') or '?'} ({dec['confidence']:.2f})"
                     if dec else "")
            p_doc = x.get("document_probability")
            agree = (f" + {x['question_probability']:.2f} × {x['expansion_weight']:.2f} × {p_doc:.2f}"
                     if p_doc is not None else "")
            lines.append(f"  {x['counted']:.3f} = {x['question_weight']:.2f} × {x['expansion_weight']:.2f}{agree} "
                         f"“{x['question_mention']['text']}” {x['question_label']} ({how}) → "
                         f"“{dm.get('text', '')}” [{dm.get('start')}–{dm.get('end')}] "
                         f"{x['document_label']}{chose}")
    return for_terminal("\n".join(lines))
