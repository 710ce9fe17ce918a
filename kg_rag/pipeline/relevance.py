"""A result's relevance in [0, 1]: the expected share of the question's words whose meaning the
document shares.

The ranking score (:func:`~kg_rag.pipeline.retrieve.score`) orders documents; it grows with
rarity (idf), repetition and the focus boost, so its size means nothing outside one answer and
shifts as documents are added. The relevance is read from the same evidence and means one thing:

* for one question mention m, with probabilities p_m(c) over its candidate concepts (its
  decision's; equal over the candidates under label matching or without a decision), and a
  document whose annotations of concept c mean c with probabilities p_a(c) (their decisions'; an
  undecided annotation's readings counted equally over its candidate concepts, an unambiguous
  one 1), the probability that the document means c somewhere is
  a(c) = 1 − Π_a (1 − p_a(c)) (decisions taken as independent), and the probability that it
  shares the mention's meaning is cov_m = Σ_c p_m(c) · match(c), where match(c) is a(c) or,
  when larger, λ · a(n) for a neighbour n that the ranking expanded c to, λ ≤ 1 the relation's
  expansion weight (broader 0.5, exactMatch 1, …);
* the relevance is the mean of cov_m over the question's mentions, each weighing 1 and a focus
  mention the ranking's focus boost.

So 1 means the document surely uses every word of the question in the meaning the question
was taken in; 0.5 for a one-word question, that the word's meaning is shared with even odds (as
for a two-way ambiguous word under ``--wsd none``). It does not depend on the other documents
of the store, and its terms are probabilities the explanation shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg_rag.pipeline.postings import Posting
    from kg_rag.pipeline.retrieve import QueryConcept, QuestionReading, Scores


@dataclass(frozen=True, slots=True)
class Relevance:
    """A document's relevance (``value``) and its terms: per question mention (text order),
    its coverage cov_m and weight."""

    value: float
    coverage: tuple[float, ...]
    weights: tuple[float, ...]


def check_min_relevance(value: object, name: str = "min_score") -> float:
    """``value`` (the argument ``name``) as a float in [0, 1], else
    :class:`~kg_rag.errors.InputError`."""
    from kg_rag.errors import InputError

    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value <= 1:
        raise InputError(f"{name!r} must be a number between 0 and 1 (a relevance), not "
                         f"{str(value)[:40]!r}")
    return float(value)


def readings_of(concepts: Sequence[QueryConcept]) -> list[QuestionReading]:
    """The question mentions' readings as the query concepts keep them (when the caller has no
    readings of its own): the unexpanded concepts grouped by the mention that set them."""
    from kg_rag.pipeline.retrieve import QuestionReading

    groups: dict[int, list[QueryConcept]] = {}
    for c in concepts:
        if c.source is None:
            groups.setdefault(c.mention if c.mention is not None else -1, []).append(c)
    return [QuestionReading(i, i + 1, {c.iri: c.weight for c in cs},
                            {c.iri: c.probability for c in cs if c.probability > 0})
            for i, cs in sorted(groups.items())]


def document_meanings(postings: Mapping[str, Posting]) -> dict[str, float]:
    """concept → a(c), the probability that one of the document's annotations means it, from
    the document's postings (:mod:`~kg_rag.pipeline.postings`: 1 − Π (1 − p) over the
    annotations with c among their candidates, p their decision's probability of c; an
    annotation without a decision counts 1/k for each of its k candidate concepts)."""
    return {c: p.meaning for c, p in postings.items()}


Expansions = Mapping[str, Sequence[tuple[str, float]]]


def expansions(concepts: Sequence[QueryConcept]) -> dict[str, list[tuple[str, float]]]:
    """neighbour IRI → (the question concept it expands, λ = its expansion weight capped at 1),
    for the expanded query concepts the ranking scored: made once per question, read for every
    document (:func:`relevance`)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for qc in concepts:
        if qc.source is not None:
            out.setdefault(qc.iri, []).append((qc.source.iri, min(1.0, qc.expansion_weight)))
    return out


def relevance(readings: Sequence[QuestionReading], focused: set[int],
              expanded: Expansions, scores: Scores, doc: str,
              focus_boost: float) -> Relevance:
    """The relevance of ``doc`` (see the module doc): ``readings`` the question's mentions,
    ``focused`` the indexes of the focus mentions among them, ``expanded`` the expansions of the
    query concepts the ranking scored (:func:`expansions`), ``scores`` its working."""
    meant = document_meanings(scores.postings.get(doc, {}))
    via: dict[str, float] = {}   # question concept → the best neighbour evidence λ · a(n)
    for iri, a in meant.items():
        for source, weight in expanded.get(iri, ()):
            via[source] = max(via.get(source, 0.0), weight * a)
    coverage, weights = [], []
    for i, m in enumerate(readings):
        dist = m.probabilities or m.weights
        total = sum(dist.values())
        cov = 0.0
        if total > 0:
            cov = sum(p * max(meant.get(c, 0.0), via.get(c, 0.0)) for c, p in dist.items()) / total
        coverage.append(min(1.0, cov))
        weights.append(focus_boost if i in focused else 1.0)
    if sum(weights) <= 0:   # a focus boost of 0 and every mention the focus
        weights = [1.0] * len(weights)
    value = sum(w * c for w, c in zip(weights, coverage, strict=True)) / sum(weights) if weights else 0.0
    return Relevance(round(value, 6), tuple(round(c, 6) for c in coverage), tuple(weights))
