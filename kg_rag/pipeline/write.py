"""The one write of a text: its graph, its passages, its annotations and the new decisions.

``index`` (a document) and ``ask``/``annotate`` (a question) record what they decided the same
way: :func:`text_change` turns an owner, its text units and the :func:`~.decide.decide` outcome
into ONE :class:`~kg_rag.store.Change` — the owner's graph is dropped and written anew together
with the decisions it needs, so a retried write is idempotent and an annotation never lands
without its decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode, Quad

from kg_rag.namespaces import KGR
from kg_rag.pipeline import record
from kg_rag.pipeline.decide import Outcome, Unit
from kg_rag.store import Change


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

    @property
    def has_passages(self) -> bool:
        return self.kind == KGR.Document


def text_change(owner: Owner, units: Sequence[Unit], outcome: Outcome,
                extra: Sequence[Quad] = ()) -> Change:
    """Drop ``owner``'s graph; insert its text, a passage per unit (documents), an annotation per
    mention of ``outcome``, the decisions ``outcome`` made anew and ``extra`` quads of the owner's
    graph (a question's retrieval record) — in one update."""
    quads: list[Quad] = record.text_owner_quads(
        owner.iri, owner.kind, owner.ident, owner.text, owner.lang, owner.title, owner.source)
    passages: list[NamedNode | None] = [None] * len(units)
    if owner.has_passages:
        for i, u in enumerate(units):
            passages[i], pq = record.passage_quads(owner.iri, i, u.start, u.end, u.lang)
            quads += pq
    for d in outcome.decided:
        quads += record.annotation_quads(owner.iri, owner.iri, passages[d.unit], d.mention,
                                         d.chosen_concepts, d.decision, d.reused)
    return Change(drop_graphs=[owner.iri], insert=quads + list(extra) + list(outcome.decision_quads))


__all__ = ["Owner", "text_change"]
