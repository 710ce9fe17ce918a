"""Deterministic IRIs and the RDF of documents, annotations and sense-selection decisions.

The shape of everything written here is ``ontology/DATA-MODEL.md``; the SHACL shapes check it.
IRIs are content hashes, so a retried write is idempotent and an identical decision is found
again instead of being recomputed.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import Iterable
from datetime import datetime, timezone
from functools import lru_cache

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.model import Agent, Mention, Selection
from kg_rag.namespaces import DCT, DECISIONS_GRAPH, ID, KGR, OA, PROV, RDF, RDFS, XSD
from kg_rag.pipeline.ranking_config import RetrievalConfig
from kg_rag.senses.mode import WsdMode
from kg_rag.text.normalise import match_key


def sha256(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def doc_iri(doc_id: str) -> NamedNode:
    return NamedNode(ID + "doc/" + urllib.parse.quote(doc_id, safe=""))


def question_iri(text: str, lang: str, wsd: WsdMode) -> NamedNode:
    """One graph per distinct question, language and mode (the hash takes the mode's value,
    so IRIs stay those of the plain-string modes before)."""
    return NamedNode(ID + "question/" + sha256(text, lang, wsd.value)[:32])


@lru_cache(maxsize=64)
def agent_iri(agent: Agent) -> NamedNode:
    tail = agent.name + "/" + urllib.parse.quote(agent.version, safe="")
    if agent.model:
        tail += "/" + urllib.parse.quote(agent.model, safe="")
    return NamedNode(ID + "agent/" + tail)


def context_hash(context: str, lang: str) -> str:
    return sha256(context, lang)


def decision_iri(agent: Agent, mention: Mention, ctx_hash: str, offset: int = 0) -> NamedNode:
    """The IRI of deciding ``mention`` in a context (its hash); ``offset``: where the context
    starts in the mention's text — the position within the context is part of the identity (one
    word used twice in a passage, as a verb and as a noun, gets two decisions)."""
    ids = sorted(c.id for c in mention.candidates)
    digest = sha256(agent.name, agent.version, agent.model or "", match_key(mention.text),
                    mention.lang, *ids, ctx_hash, mention.start - offset, mention.end - offset)
    return NamedNode(ID + "decision/" + digest[:32])


def revision_iri(previous: NamedNode, agent: Agent) -> NamedNode:
    """The IRI of re-deciding the decision ``previous`` with the selector ``agent``
    (``kg-rag redecide``): the same revision by the same selector is the same IRI, so a re-run
    or a resumed run finds it instead of asking again."""
    digest = sha256("revision", previous.value, agent.name, agent.version, agent.model or "")
    return NamedNode(ID + "decision/" + digest[:32])


def revision_quads(iri: NamedNode, previous: NamedNode) -> list[Quad]:
    """``iri`` revises ``previous``: ``kgr:revisionOf`` (a sub-property of
    ``prov:wasInformedBy``; ``prov:wasRevisionOf`` is defined between entities, and a decision
    is an activity) and the ``prov:wasInformedBy`` it implies, for readers without the ontology."""
    g = DECISIONS_GRAPH
    return [Quad(iri, KGR.revisionOf, previous, g), Quad(iri, PROV.wasInformedBy, previous, g)]


def agent_name(label: str) -> str:
    """The selector name in an agent's ``rdfs:label`` as :func:`decision_quads` writes it
    (``kg-rag llm selector`` → ``llm``); the label itself when it is not of that form."""
    if label.startswith("kg-rag ") and label.endswith(" selector"):
        return label[len("kg-rag "):-len(" selector")]
    return label


def annotation_iri(owner: NamedNode, mention: Mention) -> NamedNode:
    return NamedNode(ID + "ann/" + sha256(owner.value, mention.start, mention.end,
                                          *mention.concepts)[:24])


def now() -> Literal:
    return Literal(datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                   datatype=XSD.dateTime)


def _int(v: int) -> Literal:
    return Literal(str(int(v)), datatype=XSD.integer)


def _dec(v: float) -> Literal:
    return Literal(f"{float(v):.6f}", datatype=XSD.decimal)


#: what separates a decision's IRI from the fragment of one of its candidate nodes
#: (``<decision>#c…``, :func:`decision_quads`)
CANDIDATE = "#c"


def decision_of(subject: str) -> str:
    """The decision a decision quad's subject belongs to: the decision itself, or the decision
    of one of its candidate nodes."""
    return subject.split(CANDIDATE, 1)[0]


@lru_cache(maxsize=64)
def agent_quads(agent: Agent, g: NamedNode = DECISIONS_GRAPH) -> tuple[Quad, ...]:
    """The quads that describe ``agent`` in graph ``g`` (by default in every decision it makes;
    made once per agent and graph)."""
    a = agent_iri(agent)
    q = [
        Quad(a, RDF.type, PROV.SoftwareAgent, g),
        Quad(a, RDFS.label, Literal(f"kg-rag {agent.name} selector"), g),
        Quad(a, KGR.version, Literal(agent.version), g),
    ]
    if agent.model:
        q.append(Quad(a, KGR.model, Literal(agent.model), g))
    if agent.endpoint_host:
        q.append(Quad(a, KGR.endpointHost, Literal(agent.endpoint_host), g))
    return tuple(q)


@lru_cache(maxsize=100_000)
def _candidate_hash(cand_id: str) -> str:
    """The fragment of a candidate's node in a decision: the same senses are candidates in many
    decisions."""
    return sha256(cand_id)[:12]


def decision_quads(iri: NamedNode, mention: Mention, selection: Selection, ctx_hash: str,
                   context: str, started: Literal, ended: Literal, agent: bool = True) -> list[Quad]:
    """The quads of one decision; without ``agent``, the quads that describe its selector
    (:func:`agent_quads`) are left to the caller, which writes them once for a batch."""
    g = DECISIONS_GRAPH
    a = agent_iri(selection.agent)
    q = [
        Quad(iri, RDF.type, KGR.SenseSelection, g),
        Quad(iri, RDF.type, PROV.Activity, g),
        Quad(iri, PROV.wasAssociatedWith, a, g),
        Quad(iri, PROV.startedAtTime, started, g),
        Quad(iri, PROV.endedAtTime, ended, g),
        Quad(iri, KGR.mentionText, Literal(mention.text, language=mention.lang or None), g)
        if mention.lang else Quad(iri, KGR.mentionText, Literal(mention.text), g),
        Quad(iri, KGR.contextHash, Literal(ctx_hash), g),
        Quad(iri, KGR.contextText, Literal(context), g),
        Quad(iri, KGR.confidence, _dec(max(0.0, min(1.0, selection.confidence))), g),
        Quad(iri, KGR.status, Literal("resolved" if selection.resolved else "unresolved"), g),
        *(agent_quads(selection.agent) if agent else ()),
    ]
    if selection.reason:
        q.append(Quad(iri, KGR.reason, Literal(selection.reason), g))
    scores = dict(selection.scores)
    # a candidate node is typed by ``kgr:candidate``'s range and ranked by its score
    # (ontology/DATA-MODEL.md): ``a kgr:Candidate`` and ``kgr:rank``, two of its six quads until
    # 2026-12-07, are no longer written
    for cand in mention.candidates:
        node = NamedNode(iri.value + CANDIDATE + _candidate_hash(cand.id))
        q += [
            Quad(iri, KGR.candidate, node, g),
            Quad(node, KGR.concept, NamedNode(cand.concept), g),
            Quad(node, KGR.score, _dec(scores.get(cand.id, 0.0)), g),
        ]
        if cand.sense:
            q.append(Quad(node, KGR.sense, NamedNode(cand.sense), g))
    if selection.chosen is not None:
        q.append(Quad(iri, KGR.chosenConcept, NamedNode(selection.chosen.concept), g))
        if selection.chosen.sense:
            q.append(Quad(iri, KGR.chosenSense, NamedNode(selection.chosen.sense), g))
    if selection.llm is not None:
        t = selection.llm
        q += [
            Quad(iri, KGR.promptTemplate, Literal(t.template), g),
            Quad(iri, KGR.promptSha256, Literal(t.prompt_sha256), g),
            Quad(iri, KGR.tokensIn, _int(t.tokens_in), g),
            Quad(iri, KGR.tokensOut, _int(t.tokens_out), g),
            Quad(iri, KGR.latencyMs, _dec(t.latency_ms), g),
        ]
        if t.rationale:
            q.append(Quad(iri, KGR.rationale, Literal(t.rationale), g))
    return q


def annotation_quads(owner: NamedNode, graph: NamedNode, passage: NamedNode | None,
                     mention: Mention, chosen: Iterable[str], decision: NamedNode | None,
                     reused: bool) -> list[Quad]:
    """The oa:Annotation of one mention in ``owner`` (a document or question)."""
    a = annotation_iri(owner, mention)
    t = NamedNode(a.value + "#t")
    pos = NamedNode(a.value + "#pos")
    quote = NamedNode(a.value + "#quote")
    g = graph
    q = [
        Quad(a, RDF.type, OA.Annotation, g),
        Quad(a, OA.hasTarget, t, g),
        Quad(t, RDF.type, OA.SpecificResource, g),
        Quad(t, OA.hasSource, owner, g),
        Quad(t, OA.hasSelector, pos, g),
        Quad(t, OA.hasSelector, quote, g),
        Quad(pos, RDF.type, OA.TextPositionSelector, g),
        Quad(pos, OA.start, _int(mention.start), g),
        Quad(pos, OA.end, _int(mention.end), g),
        Quad(quote, RDF.type, OA.TextQuoteSelector, g),
        Quad(quote, OA.exact, Literal(mention.text), g),
        Quad(a, KGR.matchedBy, Literal(",".join(sorted({c.matched_by for c in mention.candidates}))), g),
    ]
    if passage is not None:
        q.append(Quad(a, KGR.passage, passage, g))
    for c in mention.concepts:
        q.append(Quad(a, KGR.candidateConcept, NamedNode(c), g))
    for c in chosen:
        q.append(Quad(a, OA.hasBody, NamedNode(c), g))
    if decision is not None:
        q.append(Quad(a, KGR.decision, decision, g))
        if reused:
            q.append(Quad(a, KGR.decisionReused, Literal("true", datatype=XSD.boolean), g))
    return q


def text_owner_quads(iri: NamedNode, kind: NamedNode, ident: str, text: str, lang: str,
                     title: str, source: str, root: str = "") -> list[Quad]:
    g = iri
    q = [
        Quad(iri, RDF.type, kind, g),
        Quad(iri, DCT.identifier, Literal(ident), g),
        Quad(iri, DCT.language, Literal(lang or "und"), g),
        Quad(iri, KGR.text, Literal(text), g),
        Quad(iri, KGR.sha256, Literal(sha256(text)), g),
        Quad(iri, PROV.generatedAtTime, now(), g),
    ]
    if title:
        q.append(Quad(iri, DCT.title, Literal(title), g))
    if source:
        q.append(Quad(iri, DCT.source, Literal(source), g))
    if root:
        q.append(Quad(iri, KGR.indexRoot, Literal(root), g))
    return q


def passage_quads(owner: NamedNode, index: int, start: int, end: int, lang: str) -> tuple[NamedNode, list[Quad]]:
    p = NamedNode(f"{owner.value}#p{index}")
    g = owner
    return p, [
        Quad(p, RDF.type, KGR.Passage, g),
        Quad(p, DCT.isPartOf, owner, g),
        Quad(p, KGR.start, _int(start), g),
        Quad(p, KGR.end, _int(end), g),
        Quad(p, DCT.language, Literal(lang or "und"), g),
    ]


def retrieval_iri(question: NamedNode) -> NamedNode:
    return NamedNode(question.value + "#retrieval")


def retrieval_quads(question: NamedNode, config: RetrievalConfig, k: int, wsd: WsdMode,
                    focus: tuple[int, int] | None) -> list[Quad]:
    """The kgr:Retrieval that ranked documents for ``question``, in the question's graph: every
    parameter of the ranking (``config``), ``k``, the sense selection mode and the focus span —
    what ``explain --document`` replays."""
    g = question
    r = retrieval_iri(question)
    q = [
        Quad(r, RDF.type, KGR.Retrieval, g),
        Quad(r, RDF.type, PROV.Activity, g),
        Quad(r, PROV.used, question, g),
        Quad(r, PROV.startedAtTime, now(), g),
        Quad(r, KGR.rankingVersion, Literal(config.version), g),
        Quad(r, KGR.matchMode, Literal(config.match), g),
        Quad(r, KGR.wsdMode, Literal(wsd.value), g),
        Quad(r, KGR.resultCount, _int(k), g),
        Quad(r, KGR.focusBoost, _double(config.focus_boost), g),
    ]
    if focus is not None:
        q += [Quad(r, KGR.focusStart, _int(focus[0]), g), Quad(r, KGR.focusEnd, _int(focus[1]), g)]
    for rel in config.same_meaning:
        q.append(Quad(r, KGR.sameMeaning, Literal(rel), g))
    for rel, w in config.expansion:
        node = NamedNode(r.value + "-" + urllib.parse.quote(rel, safe=""))
        q += [
            Quad(r, KGR.expansionWeight, node, g),
            Quad(node, RDF.type, KGR.ExpansionWeight, g),
            Quad(node, KGR.relation, Literal(rel), g),
            Quad(node, KGR.weight, _double(w), g),
        ]
    return q


def _double(v: float) -> Literal:
    """A parameter as xsd:double, exactly (repr round-trips): the replay uses the same value."""
    return Literal(repr(float(v)), datatype=XSD.double)
