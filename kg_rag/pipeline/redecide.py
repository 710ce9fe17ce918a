"""Re-decide the stored decisions of indexed documents with another selector (``kg-rag redecide``).

Indexing decides every ambiguous mention with the fast offline selector; an LLM (or any other
selector) can upgrade those decisions later, in the background, a document at a time:

1. the document's decided annotations are read from the store (``select-redecide-annotations``)
   and their passages annotated again, so that each selector request carries the same mention,
   candidates, context and evidence as at indexing; an annotation whose candidates differ from
   its decision's (the vocabularies changed since) is *stale*: skipped, re-index the document;
2. a decision is *eligible* unless the target selector already made it (its IRI is the one that
   selector gives the mention, fresh or as a revision) or, with ``below``, the chosen reading's
   probability is at least ``below``; ``limit`` caps how many are re-decided in one run;
3. the eligible mentions of consecutive documents, :data:`BATCH` (16) at a time, go to the
   selector in one ``select()`` (an LLM selector sends up to 16 mentions a request); a decision
   shared by several annotations is asked once, and a revision already recorded is reused;
4. each new decision is its own ``kgr:SenseSelection`` activity (IRI:
   :func:`~kg_rag.pipeline.record.revision_iri` of the old one and the selector) that
   ``kgr:revisionOf`` (⊑ ``prov:wasInformedBy``) the old one, which stays unchanged; the
   annotations' ``kgr:decision`` and ``oa:hasBody`` are re-pointed at it in the SAME update
   (one per document, under the writer lock, after checking that the annotations still point
   at what was read) — so retrieval, which reads each annotation's decision, follows at once.

An answer the selector could not give (unresolved: the LLM's answer was invalid twice) writes
nothing: the old decision stands and the report says why. So does a decision a composite
selector's fall-back made because its model failed (``knowledge+llm``: an unsure mention the
LLM did not decide; ``llm,knowledge``: one the knowledge selector took over) — it is no
upgrade, and a later run asks the model again. A selector that fails outright
(:class:`~kg_rag.errors.SelectionError`: provider down) stops the run with that error; the
documents written before it stay written, and running again resumes — what is done is skipped
as already decided by that selector. ``dry_run`` decides (an LLM is asked) and writes nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.annotate import Annotator
from kg_rag.errors import InputError, NotFoundError, SelectionError
from kg_rag.model import Agent, Mention, Selection, SelectionRequest
from kg_rag.namespaces import KGR, OA, XSD
from kg_rag.pipeline import postings, record
from kg_rag.pipeline.decide import Decided, Unit, load_decisions, selection_requests
from kg_rag.pipeline.index import shift
from kg_rag.senses.base import SenseSelector
from kg_rag.senses.selective import probability
from kg_rag.store import Change, Store, Values

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Redecided:
    """One decision re-decided: where, what it chose before and what it chooses now."""

    doc_id: str
    annotation: str
    start: int
    end: int
    text: str
    previous: str                    # the old decision's IRI
    decision: str                    # the new one's (also in a dry run: the IRI it would get)
    old_concept: str | None
    new_concept: str | None
    old_probability: float | None
    new_probability: float | None
    selector: str                    # the agent that made the new decision
    reused: bool = False             # the revision was already recorded (a shared decision)
    written: bool = False
    reason: str = ""

    @property
    def changed(self) -> bool:
        return self.old_concept != self.new_concept


@dataclass(frozen=True, slots=True)
class Kept:
    """A decision the selector was asked about and could not re-decide: the old one stands."""

    doc_id: str
    text: str
    start: int
    previous: str
    reason: str


@dataclass(frozen=True, slots=True)
class RedecideReport:
    """What one run of :func:`redecide` examined, re-decided, changed and wrote."""

    mode: str
    dry_run: bool
    documents: int = 0               # documents examined
    decisions: int = 0               # decided annotations examined
    current: int = 0                 # already decided by the target selector: skipped
    confident: int = 0               # probability ≥ below: skipped
    stale: int = 0                   # candidates differ from the decision's: re-index
    eligible: int = 0                # to re-decide (before the limit)
    written_documents: int = 0
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    limited: bool = False            # stopped at the limit: later documents not examined
    seconds: float = 0.0
    items: tuple[Redecided, ...] = ()
    kept: tuple[Kept, ...] = field(default=())

    @property
    def redecided(self) -> int:
        return len(self.items)

    @property
    def changed(self) -> int:
        return sum(1 for i in self.items if i.changed)


@dataclass(slots=True)
class _Annotation:
    iri: str
    start: int
    end: int
    passage: tuple[int, int, str]
    decision: str
    bodies: list[str]
    reused: bool


@dataclass(slots=True)
class _Candidate:
    """An eligible annotation: its mention, its unit and the stored decision."""

    ann: _Annotation
    mention: Mention
    unit: int
    selection: Selection


def _annotations(store: Store, doc: NamedNode) -> dict[str, _Annotation]:
    out: dict[str, _Annotation] = {}
    for r in store.select("select-redecide-annotations", bind={"doc": doc}):
        a = out.get(r["ann"].value)
        if a is None:
            a = out[r["ann"].value] = _Annotation(
                r["ann"].value, int(r["start"].value), int(r["end"].value),
                (int(r["pstart"].value), int(r["pend"].value), r["plang"].value),
                r["decision"].value, [], "reused" in r and r["reused"].value == "true")
        if "body" in r and r["body"].value not in a.bodies:
            a.bodies.append(r["body"].value)
    return out


def check_options(below: float | None, limit: int | None) -> None:
    """InputError for a ``below`` outside 0..1 or a ``limit`` below 1 (before anything runs)."""
    if below is not None and (isinstance(below, bool) or not isinstance(below, int | float)
                              or not 0.0 <= float(below) <= 1.0):
        raise InputError(f"--below must be a probability from 0 to 1, not {below!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"--limit must be a whole number of decisions, at least 1, not {limit!r}")


def documents_to_redecide(store: Store, doc_ids: Sequence[str] | None) -> list[tuple[str, NamedNode, str]]:
    """(id, IRI, text) of the named documents (NotFoundError for one not indexed, before any
    work) or of every indexed document, in id order."""
    if doc_ids is None:
        rows = store.select("select-documents")
        ids = [r["id"].value for r in rows]
    else:
        ids = list(dict.fromkeys(doc_ids))
        if not ids:
            raise InputError("no document named: give document ids, or none for all documents")
    out = []
    for i in ids:
        iri = record.doc_iri(i)
        rows = store.select("select-document", bind={"doc": iri})
        if not rows:
            raise NotFoundError(f"no indexed document has the id {i!r}; kg-rag documents lists them")
        out.append((i, iri, rows[0]["text"].value))
    return out


class _Plan:
    """The decided annotations of one document, sorted into skipped and eligible."""

    def __init__(self, store: Store, annotator: Annotator, selector: SenseSelector,
                 doc: NamedNode, text: str, below: float | None) -> None:
        self.anns = _annotations(store, doc)
        self.units: list[Unit] = []
        self.eligible: list[_Candidate] = []
        self.current = self.confident = self.stale = 0
        if not self.anns:
            return
        passages = sorted({a.passage for a in self.anns.values()})
        unit_of: dict[tuple[int, int, str], int] = {}
        for s, e, lang in passages:
            unit_of[(s, e, lang)] = len(self.units)
            self.units.append(Unit(s, e, lang, text[s:e],
                                   tuple(shift(annotator.annotate(text[s:e], lang), s))))
        decisions = sorted({a.decision for a in self.anns.values()})
        previous: dict[str, str] = {}
        for r in store.select("select-decision-lineage",
                              values=Values.column("decision", [NamedNode(d) for d in decisions])):
            if "previous" in r:
                previous[r["decision"].value] = r["previous"].value
        matched: dict[str, tuple[Mention, int]] = {}
        for a in self.anns.values():
            u = unit_of[a.passage]
            m = next((m for m in self.units[u].mentions
                      if m.start == a.start and m.end == a.end and m.ambiguous), None)
            if m is not None:
                matched[a.iri] = (m, u)
        mentions = {self.anns[k].decision: m for k, (m, _) in matched.items()}
        stored = load_decisions(store, [NamedNode(d) for d in sorted(mentions)], mentions,
                                "stored")
        agent = selector.agent
        for a in sorted(self.anns.values(), key=lambda x: (x.start, x.end, x.iri)):
            sel = stored.get(a.decision)
            if a.iri not in matched or sel is None:
                self.stale += 1
                continue
            m, u = matched[a.iri]
            if {cid for cid, _ in sel.scores} != {c.id for c in m.candidates}:
                self.stale += 1
                continue
            unit = self.units[u]
            fresh = record.decision_iri(agent, m, record.context_hash(unit.context, unit.lang),
                                        unit.start).value
            prev = previous.get(a.decision)
            if a.decision == fresh or (prev is not None and
                                       a.decision == record.revision_iri(NamedNode(prev), agent).value):
                self.current += 1
                continue
            p = probability(sel)
            if below is not None and p is not None and p >= below:
                self.confident += 1
                continue
            self.eligible.append(_Candidate(a, m, u, sel))


def _concept(sel: Selection | None) -> str | None:
    return sel.chosen.concept if sel is not None and sel.chosen is not None else None


def _true() -> Literal:
    return Literal("true", datatype=XSD.boolean)


def _repoint(doc: NamedNode, ann: _Annotation, new: NamedNode, chosen: str,
             reused: bool) -> tuple[list[Quad], list[Quad]]:
    """(delete, insert) quads of ``ann`` in the document's graph: its decision and bodies."""
    delete = [Quad(NamedNode(ann.iri), KGR.decision, NamedNode(ann.decision), doc)]
    delete += [Quad(NamedNode(ann.iri), OA.hasBody, NamedNode(b), doc) for b in ann.bodies]
    if ann.reused:
        delete.append(Quad(NamedNode(ann.iri), KGR.decisionReused, _true(), doc))
    a = NamedNode(ann.iri)
    insert = [Quad(a, KGR.decision, new, doc)]
    insert.append(Quad(a, OA.hasBody, NamedNode(chosen), doc))
    if reused:
        insert.append(Quad(a, KGR.decisionReused, _true(), doc))
    return delete, insert


#: mentions gathered from consecutive documents for one selector call (an LLM selector sends
#: up to 16 a request); each document is still written by its own update
BATCH = 16


@dataclass(slots=True)
class _Work:
    """One document's eligible decisions, waiting for the selector."""

    doc_id: str
    iri: NamedNode
    plan: _Plan
    todo: list[_Candidate]


def redecide(store: Store, lock: threading.RLock, annotator: Annotator, selector: SenseSelector,
             mode: str, doc_ids: Sequence[str] | None = None, below: float | None = None,
             limit: int | None = None, dry_run: bool = False,
             progress: Callable[[int], None] | None = None,
             total: Callable[[int], None] | None = None, batch: int = BATCH) -> RedecideReport:
    """Re-decide the decisions of ``doc_ids`` (None: every document) with ``selector`` (see
    the module), the mentions of consecutive documents ``batch`` at a time in one selector
    call; ``total(n)`` once with the number of documents, ``progress(1)`` after each."""
    t0 = time.perf_counter()
    check_options(below, limit)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError(f"--batch must be a whole number of mentions, at least 1, not {batch!r}")
    docs = documents_to_redecide(store, doc_ids)
    if total is not None:
        total(len(docs))
    items: list[Redecided] = []
    kept: list[Kept] = []
    counts = {"documents": 0, "decisions": 0, "current": 0, "confident": 0, "stale": 0,
              "eligible": 0, "written": 0}
    calls: dict[str, tuple[int, int, int]] = {}
    pending: list[_Work] = []
    taken = 0                       # decisions sent to the selector or reused in this run
    limited = False

    def flush() -> None:
        if not pending:
            return
        try:
            results, used = _decide(store, selector, pending)
        except SelectionError as e:
            raise SelectionError(
                f"{e}; stopped at document {pending[0].doc_id!r}: {counts['written']} documents "
                f"re-decided before it are kept, run again to resume") from e
        calls.update(used)
        for work, done, not_done, quads in results:
            kept.extend(not_done)
            if done and not dry_run:
                if _write(store, lock, work.iri, work.plan, done, quads):
                    counts["written"] += 1
                    done = [replace(d, written=True) for d in done]
                else:
                    log.warning("document %s changed while it was re-decided; skipped",
                                work.doc_id)
            items.extend(done)
            if progress is not None:
                progress(1)
        pending.clear()

    for doc_id, iri, text in docs:
        left = None if limit is None else limit - taken
        if left is not None and left <= 0:
            limited = True
            break
        plan = _Plan(store, annotator, selector, iri, text, below)
        counts["documents"] += 1
        counts["decisions"] += len(plan.anns)
        counts["current"] += plan.current
        counts["confident"] += plan.confident
        counts["stale"] += plan.stale
        counts["eligible"] += len(plan.eligible)
        todo = plan.eligible if left is None else plan.eligible[:left]
        if left is not None and len(plan.eligible) > left:
            limited = True
        taken += len(todo)
        if not todo:
            if progress is not None:
                progress(1)
            continue
        pending.append(_Work(doc_id, iri, plan, list(todo)))
        if sum(len(w.todo) for w in pending) >= batch:
            flush()
    flush()
    return RedecideReport(
        mode=mode, dry_run=dry_run, documents=counts["documents"], decisions=counts["decisions"],
        current=counts["current"], confident=counts["confident"], stale=counts["stale"],
        eligible=counts["eligible"], written_documents=counts["written"], llm_calls=sum(t[2] for t in calls.values()),
        tokens_in=sum(t[0] for t in calls.values()), tokens_out=sum(t[1] for t in calls.values()),
        limited=limited, seconds=time.perf_counter() - t0, items=tuple(items), kept=tuple(kept))


_Result = tuple[_Work, list[Redecided], list[Kept], list[Quad]]


def _decide(store: Store, selector: SenseSelector, works: Sequence[_Work]
            ) -> tuple[list[_Result], dict[str, tuple[int, int, int]]]:
    """New decisions for the works' eligible annotations: revisions already recorded (another
    document shared the decision) reused, the rest from ONE call of ``selector``; per work its
    re-decided and kept annotations and the quads of its new decisions."""
    agent = selector.agent
    targets = {c.ann.iri: record.revision_iri(NamedNode(c.ann.decision), agent)
               for w in works for c in w.todo}
    wanted = [NamedNode(v) for v in sorted({t.value for t in targets.values()})]
    recorded = {r["decision"].value for r in store.select(
        "select-recorded-decisions", values=Values.column("decision", wanted))}
    selections: dict[str, tuple[Selection, bool]] = {}
    reuse = [c for w in works for c in w.todo if targets[c.ann.iri].value in recorded]
    if reuse:
        loaded = load_decisions(store, [targets[c.ann.iri] for c in reuse],
                                {targets[c.ann.iri].value: c.mention for c in reuse}, agent.name)
        for c in reuse:
            if targets[c.ann.iri].value in loaded:
                selections[c.ann.iri] = (loaded[targets[c.ann.iri].value], True)
    ask: list[tuple[_Work, _Candidate]] = []
    same: dict[str, list[_Candidate]] = {}   # revision IRI → later annotations that share it
    for w in works:
        for c in w.todo:
            if c.ann.iri in selections:
                continue
            t = targets[c.ann.iri].value
            if t in same:   # one decision shared by several annotations: asked once
                same[t].append(c)
            else:
                same[t] = []
                ask.append((w, c))
    requests = []
    for w in works:
        mine = [c for v, c in ask if v is w]
        if mine:
            requests += selection_requests(store, w.plan.units,
                                           [Decided(c.mention, c.unit) for c in mine])
    quads: dict[str, list[Quad]] = {w.doc_id: [] for w in works}
    used: dict[str, tuple[int, int, int]] = {}
    written_by: set[tuple[str, str]] = set()
    started = ended = record.now()
    if ask:
        started = record.now()
        answers, fell_back = _select(selector, requests)
        ended = record.now()
        if len(answers) != len(ask):
            raise SelectionError(f"the {agent.name} selector answered {len(answers)} of "
                                 f"{len(ask)} mentions; report this as a bug")
        for (_w, c), sel, fell in zip(ask, answers, fell_back, strict=True):
            if sel.llm is not None:
                used[sel.llm.prompt_sha256] = (sel.llm.tokens_in, sel.llm.tokens_out,
                                               sel.llm.requests)
            if fell:  # the model failed: its fall-back's decision is no upgrade; ask next time
                sel = replace(sel, chosen=None, reason=sel.reason or "the model was not usable")
            selections[c.ann.iri] = (sel, False)
            new = targets[c.ann.iri]
            for other in same[new.value]:
                selections[other.ann.iri] = (sel, False)
    # a document whose annotation shares a decision asked for in another document carries
    # that decision's quads too (its write drops them if the other one was written first);
    # each document's write describes the selectors of its decisions once
    for w in works:
        agents: dict[Agent, None] = {}
        for c in w.todo:
            new = targets[c.ann.iri]
            sel, reused = selections[c.ann.iri]
            if reused or sel.chosen is None or (w.doc_id, new.value) in written_by:
                continue
            written_by.add((w.doc_id, new.value))
            unit = w.plan.units[c.unit]
            quads[w.doc_id] += record.decision_quads(
                new, c.mention, sel, record.context_hash(unit.context, unit.lang), unit.context,
                started, ended, agent=False)
            quads[w.doc_id] += record.revision_quads(new, NamedNode(c.ann.decision))
            agents.setdefault(sel.agent, None)
        for a in agents:
            quads[w.doc_id] += record.agent_quads(a)
    results: list[_Result] = []
    for w in works:
        done: list[Redecided] = []
        not_done: list[Kept] = []
        for c in w.todo:
            sel, reused = selections[c.ann.iri]
            if sel.chosen is None:
                not_done.append(Kept(w.doc_id, c.mention.text, c.mention.start, c.ann.decision,
                                     sel.reason or "the selector chose nothing"))
                continue
            done.append(Redecided(
                w.doc_id, c.ann.iri, c.mention.start, c.mention.end, c.mention.text,
                c.ann.decision, targets[c.ann.iri].value, _concept(c.selection), _concept(sel),
                probability(c.selection), probability(sel), sel.agent.name, reused,
                reason=sel.reason))
        results.append((w, done, not_done, quads[w.doc_id]))
    return results, used


def _select(selector: SenseSelector, requests: Sequence[SelectionRequest]
            ) -> tuple[list[Selection], list[bool]]:
    """The selector's answers, and for each whether a composite selector's fall-back made it
    because its model failed or answered badly (``knowledge+llm``: an unsure mention the LLM
    did not decide; ``llm,knowledge``: one the fall-back decided) — not written, so that a
    later run asks the model again."""
    pairs = getattr(selector, "select_pairs", None)
    if callable(pairs):  # SelectiveSelector
        got: list[Any] = list(pairs(requests))
        return ([p.final for p in got],
                [bool(p.asked) and p.final.agent == p.knowledge.agent for p in got])
    answers = selector.select(requests)
    primary = getattr(selector, "primary", None)   # FallbackSelector
    if primary is not None:
        return answers, [s.agent != primary.agent for s in answers]
    return answers, [False] * len(answers)


def _write(store: Store, lock: threading.RLock, doc: NamedNode, plan: _Plan,
           done: Sequence[Redecided], quads: Sequence[Quad]) -> bool:
    """One update: the new decisions and the re-pointed annotations — if each annotation still
    points at the decision that was read (else False: nothing is written)."""
    with lock:
        now = _annotations(store, doc)
        for d in done:
            a, b = plan.anns[d.annotation], now.get(d.annotation)
            if b is None or b.decision != a.decision or sorted(b.bodies) != sorted(a.bodies):
                return False
        # a revision another writer recorded meanwhile (a decision shared with another
        # document) is not written twice: two start times would break its shape
        new = sorted({d.decision for d in done if not d.reused})
        recorded = {r["decision"].value for r in store.select(
            "select-recorded-decisions",
            values=Values.column("decision", [NamedNode(n) for n in new]))} if new else set()
        insert = [q for q in quads
                  if record.decision_of(getattr(q.subject, "value", "")) not in recorded]
        # and the annotation takes what that recorded decision chose
        chosen = {r["decision"].value: r["chosenConcept"].value for r in store.select(
            "select-decisions", values=Values.column("decision", [NamedNode(n) for n in
                                                                  sorted(recorded)]))
            if "chosenConcept" in r} if recorded else {}
        delete: list[Quad] = []
        for d in done:
            assert d.new_concept is not None  # unresolved answers are kept, never written
            dq, iq = _repoint(doc, plan.anns[d.annotation], NamedNode(d.decision),
                              chosen.get(d.decision, d.new_concept),
                              d.reused or d.decision in recorded)
            delete += dq
            insert += iq
        # the document's postings follow its annotations, in the same update
        pd, pi = postings.rewrite(store, doc, {d.annotation: d.decision for d in done}, insert)
        store.apply(Change(delete=delete + pd, insert=insert + pi))
    return True


__all__ = ["Kept", "RedecideReport", "Redecided", "check_options", "redecide"]
