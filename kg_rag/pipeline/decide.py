"""Annotate a text and decide its ambiguous mentions: the shared stage of indexing and asking.

Decisions already in the store (same selector, mention, candidates and context → same IRI) are
reused instead of recomputed; the rest go to the selector in ONE call (one LLM request).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyoxigraph import NamedNode, Quad

from kg_rag.model import Agent, Mention, Selection, SelectionRequest
from kg_rag.pipeline import record
from kg_rag.senses.base import SenseSelector, stands_in
from kg_rag.store import Store, Values

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Unit:
    """A stretch of text decided together (a passage of a document, or a question)."""

    start: int
    end: int
    lang: str
    context: str
    mentions: tuple[Mention, ...]


@dataclass(frozen=True, slots=True)
class Decided:
    """One mention of unit number ``unit``, and what was decided about it (if it is ambiguous
    and a selector decided: the selection, the decision IRI, and whether it was reused)."""

    mention: Mention
    unit: int
    selection: Selection | None = None
    decision: NamedNode | None = None
    reused: bool = False

    @property
    def chosen_concepts(self) -> tuple[str, ...]:
        """The concepts retrieval may follow: the only one, or the chosen one (never a rejected one)."""
        if not self.mention.ambiguous:
            return self.mention.concepts
        if self.selection is not None and self.selection.chosen is not None:
            return (self.selection.chosen.concept,)
        return ()


@dataclass(frozen=True, slots=True)
class Outcome:
    """Every mention of the units, in order, with its decision; the quads of the new decisions."""

    decided: tuple[Decided, ...]
    decision_quads: tuple[Quad, ...] = ()
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


def _number(term: object) -> float:
    return float(getattr(term, "value", 0.0))


def load_decisions(store: Store, iris: Sequence[NamedNode],
                   mentions: dict[str, Mention], agent_name: str) -> dict[str, Selection]:
    """Selections recorded earlier for these decision IRIs (absent ones are missing; so is one
    without a candidate). Two queries: the decisions' own fields, then the candidates of those
    found — a new document's decisions are all absent, and a stored decision's candidate rows
    (~60 µs each on a 10,000-document store) are most of what reusing it costs."""
    if not iris:
        return {}
    first: dict[str, dict[str, Any]] = {}
    for r in store.select("select-decisions", values=Values.column("decision", iris)):
        first.setdefault(r["decision"].value, r)
    if not first:
        return {}
    scores: dict[str, dict[str, float]] = {}
    for r in store.select("select-decision-candidates",
                          values=Values.column("decision", [NamedNode(d) for d in first])):
        sid = (r.get("candSense") or r["candConcept"]).value
        scores.setdefault(r["decision"].value, {})[sid] = _number(r["score"])
    out: dict[str, Selection] = {}
    for d, r in first.items():
        if d not in scores:
            continue
        mention = mentions[d]
        chosen = None
        if "chosenConcept" in r:
            want_sense = r["chosenSense"].value if "chosenSense" in r else None
            for c in mention.candidates:
                if c.concept == r["chosenConcept"].value and (want_sense is None or c.sense == want_sense):
                    chosen = c
                    break
        out[d] = Selection(
            scores=tuple(scores[d].items()), chosen=chosen, confidence=_number(r["confidence"]),
            agent=Agent(agent_name, "stored"), reason=r["reason"].value if "reason" in r else "",
        )
    return out


def decide(store: Store, units: Sequence[Unit], selector: SenseSelector | None,
           target_lang: str | None = None) -> Outcome:
    """Decide every ambiguous mention of ``units``; return decisions (new ones as quads)."""
    decided = [Decided(m, i) for i, u in enumerate(units) for m in u.mentions]
    if selector is None:
        return Outcome(tuple(decided))
    pending = [i for i, d in enumerate(decided) if d.mention.ambiguous]
    if not pending:
        return Outcome(tuple(decided))
    agent = selector.agent
    hashes: dict[int, str] = {}          # position in ``decided`` → context hash
    by_iri: dict[str, Mention] = {}
    for i in pending:
        d = decided[i]
        u = units[d.unit]
        hashes[i] = record.context_hash(u.context, u.lang)
        iri = record.decision_iri(agent, d.mention, hashes[i], u.start)
        decided[i] = replace(d, decision=iri)
        by_iri[iri.value] = d.mention
    stored = load_decisions(store, [NamedNode(v) for v in by_iri], by_iri, agent.name)
    newest = newest_revisions(store, stored, by_iri)
    todo = []
    again: dict[int, NamedNode] = {}     # position → the stored stand-in it is decided again for
    for i in pending:
        d = decided[i]
        assert d.decision is not None
        sel = stored.get(d.decision.value)
        if d.decision.value in newest:  # re-decided since (kg-rag redecide): the newest stands
            held: tuple[NamedNode, Selection] | None = newest[d.decision.value]
        else:
            held = (d.decision, sel) if sel is not None else None
        if held is None:
            todo.append(i)
        elif stands_in(held[1]):
            # it stands in for an answer the LLM did not give (invalid twice, or a fallback's
            # choice): ask again, and write the new answer as a revision of it — the newest
            # revision is what indexing and asking follow from then on
            again[i] = held[0]
            todo.append(i)
        else:
            decided[i] = replace(d, selection=held[1], decision=held[0], reused=True)
    if not todo:
        return Outcome(tuple(decided))
    requests = selection_requests(store, units, [decided[i] for i in todo], target_lang)
    started = record.now()
    selections = selector.select(requests)
    ended = record.now()
    if len(selections) != len(todo):
        from kg_rag.errors import SelectionError

        raise SelectionError(f"the {agent.name} selector answered {len(selections)} of {len(todo)} mentions")
    quads: list[Quad] = []
    agents: dict[Agent, None] = {}   # the selectors of these decisions, each described once
    llm_requests: dict[str, tuple[int, int, int]] = {}
    for i, sel in zip(todo, selections, strict=True):
        d = decided[i] = replace(decided[i], selection=sel)
        if i in again:
            d = decided[i] = replace(d, decision=record.revision_iri(again[i], agent))
            assert d.decision is not None
            quads += record.revision_quads(d.decision, again[i])
        u = units[d.unit]
        assert d.decision is not None
        quads += record.decision_quads(d.decision, d.mention, sel, hashes[i], u.context, started, ended,
                                       agent=False)
        agents.setdefault(sel.agent, None)
        if sel.llm is not None:  # mentions of one request share its prompt and token counts
            llm_requests[sel.llm.prompt_sha256] = (sel.llm.tokens_in, sel.llm.tokens_out,
                                                   sel.llm.requests)
    for a in agents:
        quads += record.agent_quads(a)
    return Outcome(tuple(decided), tuple(quads), llm_calls=sum(t[2] for t in llm_requests.values()),
                   tokens_in=sum(t[0] for t in llm_requests.values()),
                   tokens_out=sum(t[1] for t in llm_requests.values()))


def selection_requests(store: Store, units: Sequence[Unit], items: Sequence[Decided],
                       target_lang: str | None = None) -> list[SelectionRequest]:
    """What a selector gets for each of ``items`` (mentions of ``units``): its context, the
    evidence of its candidates (fetched in one go) and the other mentions of its unit."""
    from kg_rag.pipeline.evidence import fetch_evidence

    all_cands = [c for d in items for c in d.mention.candidates]
    evidence = {e.candidate: e for e in fetch_evidence(store, all_cands)}
    requests = []
    # a selector reads the context at the mention's offsets: make them the context's own, once
    # per unit (each of a unit's ambiguous mentions gets all the others)
    shifted: dict[int, tuple[Mention, ...]] = {}
    for d in items:
        u = units[d.unit]
        if d.unit not in shifted:
            shifted[d.unit] = tuple(_within(m, u.start) for m in u.mentions)
        mine = shifted[d.unit]
        others = tuple(sm for m, sm in zip(u.mentions, mine, strict=True) if m is not d.mention)
        requests.append(SelectionRequest(
            mention=_within(d.mention, u.start), context=u.context, context_lang=u.lang,
            evidence=tuple(evidence[c] for c in d.mention.candidates),
            others=others, target_lang=target_lang,
        ))
    return requests


def newest_revisions(store: Store, stored: dict[str, Selection],
                     mentions: dict[str, Mention]) -> dict[str, tuple[NamedNode, Selection]]:
    """For each of the ``stored`` decisions that was re-decided since (``kgr:revisionOf``, by
    ``kg-rag redecide``), its newest revision (latest end time; IRI as tie-break) and what that
    one chose — so indexing again or asking again keeps the upgrade without asking a model."""
    if not stored:
        return {}
    rows = store.select("select-decision-revisions",
                        values=Values.column("decision", [NamedNode(d) for d in sorted(stored)]))
    best: dict[str, tuple[str, str, str]] = {}
    for r in rows:
        key = (r["ended"].value, r["revision"].value, r["label"].value)
        d = r["decision"].value
        if d not in best or key > best[d]:
            best[d] = key
    out: dict[str, tuple[NamedNode, Selection]] = {}
    by_name: dict[str, dict[str, str]] = {}
    for d, (_, rev, label) in best.items():
        by_name.setdefault(record.agent_name(label), {})[rev] = d
    for name, revs in by_name.items():
        loaded = load_decisions(store, [NamedNode(v) for v in revs],
                                {v: mentions[d] for v, d in revs.items()}, name)
        for rev, sel in loaded.items():
            out[revs[rev]] = (NamedNode(rev), sel)
    return out


def _within(m: Mention, offset: int) -> Mention:
    """``m`` with offsets into its unit's context (``offset``: where the context starts)."""
    return m if offset == 0 else replace(m, start=m.start - offset, end=m.end - offset)
