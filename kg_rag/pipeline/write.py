"""The one write of a text: its graph, its passages, its annotations and the new decisions.

``index`` (a document) and ``ask``/``annotate`` (a question) record what they decided the same
way: :func:`text_change` turns an owner, its text units and the :func:`~.decide.decide` outcome
into ONE :class:`~kg_rag.store.Change` — the owner's graph is dropped and written anew together
with the decisions it needs, so a retried write is idempotent and an annotation never lands
without its decision.

:func:`write_text` is THE write of a question (``ask``/``annotate``): under the knowledge graph's
one writer lock it asks the store which of the outcome's new decisions another writer recorded
meanwhile (deciding runs outside the lock, so concurrent identical questions decide the same
decision IRI) and leaves those out, so a decision is recorded once — never with two
``prov:startedAtTime`` values, which the shapes refuse.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode, Quad

from kg_rag.namespaces import KGR
from kg_rag.pipeline import postings, record
from kg_rag.pipeline.decide import Outcome, Unit
from kg_rag.store import Change, Store, Values


@dataclass(frozen=True, slots=True)
class Owner:
    """A text that owns a graph: a document (its units are passages) or a question."""

    iri: NamedNode
    kind: NamedNode          # KGR.Document or KGR.Question
    ident: str               # dct:identifier
    text: str
    lang: str                # the text's (main) language
    title: str = ""
    source: str = ""
    root: str = ""           # kgr:indexRoot of a document read from a folder or file

    @property
    def has_passages(self) -> bool:
        return self.kind == KGR.Document


def text_change(owner: Owner, units: Sequence[Unit], outcome: Outcome,
                extra: Sequence[Quad] = ()) -> Change:
    """Drop ``owner``'s graph; insert its text, a passage per unit (documents), an annotation per
    mention of ``outcome`` (and a document's postings), the decisions ``outcome`` made anew and
    ``extra`` quads of the owner's graph (a question's retrieval record) — in one update."""
    quads = owner_quads(owner) + body_quads(owner, units, outcome)
    return Change(drop_graphs=[owner.iri], insert=quads + list(extra) + list(outcome.decision_quads),
                  nested=record.CANDIDATE)


def owner_quads(owner: Owner) -> list[Quad]:
    """What names ``owner`` in its graph: its type, identifier, language, text, title, source —
    what lists it among the documents (written last for a document written in sections)."""
    return record.text_owner_quads(owner.iri, owner.kind, owner.ident, owner.text, owner.lang,
                                   owner.title, owner.source, owner.root)


def body_quads(owner: Owner, units: Sequence[Unit], outcome: Outcome, first: int = 0) -> list[Quad]:
    """A passage per unit (documents; numbered from ``first``, the unit's number in the whole
    document), an annotation per mention of ``outcome`` and, for a document, the postings of
    these mentions (:mod:`.postings`; a document written in sections has a set per section) —
    without the decisions' quads."""
    quads: list[Quad] = []
    passages: list[NamedNode | None] = [None] * len(units)
    if owner.has_passages:
        for i, u in enumerate(units):
            passages[i], pq = record.passage_quads(owner.iri, first + i, u.start, u.end, u.lang)
            quads += pq
    for d in outcome.decided:
        quads += record.annotation_quads(owner.iri, owner.iri, passages[d.unit], d.mention,
                                         d.chosen_concepts, d.decision, d.reused)
    if owner.has_passages:   # a document: what the ranking reads of it (pipeline.postings)
        quads += postings.posting_quads(owner.iri, outcome.decided)
    return quads


def unrecorded(store: Store, outcome: Outcome) -> Outcome:
    """``outcome`` without the quads of the new decisions that the store already has."""
    if not outcome.decision_quads:
        return outcome
    new = {d.decision.value: d.decision for d in outcome.decided
           if d.decision is not None and d.selection is not None and not d.reused}
    if not new:
        return outcome
    rows = store.select("select-recorded-decisions",
                        values=Values.column("decision", [new[k] for k in sorted(new)]))
    recorded = {r["decision"].value for r in rows}
    if not recorded:
        return outcome

    def owned(q: Quad) -> bool:   # a recorded decision's own quads, its candidates' included
        subject = getattr(q.subject, "value", "")
        return record.decision_of(subject) in recorded

    return replace(outcome, decision_quads=tuple(q for q in outcome.decision_quads if not owned(q)))


def write_text(store: Store, lock: threading.RLock, owner: Owner, units: Sequence[Unit],
               outcome: Outcome, extra: Sequence[Quad] = ()) -> None:
    """Write ``owner`` and its new decisions in one update, under ``lock`` (see the module doc)."""
    with lock:
        store.apply(text_change(owner, units, unrecorded(store, outcome), extra))


__all__ = ["Owner", "body_quads", "owner_quads", "text_change", "unrecorded", "write_text"]
