"""Measure an alignment against known sense→concept links: take a dictionary's own links out
(``ontolex:reference``, ``isLexicalizedSenseOf``, ``lexicalizedSense``), align, compare.

Used by the tests and by ``kg-rag align --gold`` reports (docs/ALIGNMENT.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph

from kg_rag.align.model import Proposal
from kg_rag.namespaces import ONTOLEX

LINKS = (ONTOLEX.reference, ONTOLEX.isLexicalizedSenseOf, ONTOLEX.lexicalizedSense)


def strip_links(path: Path, out: Path) -> set[tuple[str, str]]:
    """Write ``path`` (an RDF file) to ``out`` (N-Triples) without its sense→concept links;
    return the links taken out as (sense, concept) pairs."""
    fmt = pyoxigraph.RdfFormat.from_extension(path.suffix.lstrip(".")) or pyoxigraph.RdfFormat.TURTLE
    kept, gold = [], set()
    for t in pyoxigraph.parse(path=str(path), format=fmt):
        if t.predicate in LINKS:
            s, c = (t.object, t.subject) if t.predicate == ONTOLEX.lexicalizedSense else (t.subject, t.object)
            gold.add((s.value, c.value))
        else:
            kept.append(t)
    pyoxigraph.serialize(kept, str(out), format=pyoxigraph.RdfFormat.N_TRIPLES)
    return gold


@dataclass(frozen=True, slots=True)
class Measure:
    threshold: float
    proposed: int
    correct: int
    gold: int

    @property
    def precision(self) -> float:
        return self.correct / self.proposed if self.proposed else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0


def measure(proposals: Iterable[Proposal], gold: set[tuple[str, str]], threshold: float) -> Measure:
    """Precision and recall of the proposals scored ≥ ``threshold``."""
    kept = [p for p in proposals if p.score >= threshold]
    correct = sum(1 for p in kept if (p.sense, p.concept) in gold)
    return Measure(threshold, len(kept), correct, len(gold))


def curve(proposals: Sequence[Proposal], gold: set[tuple[str, str]]) -> list[Measure]:
    """Precision/recall at every distinct score, highest first."""
    return [measure(proposals, gold, t) for t in sorted({p.score for p in proposals}, reverse=True)]
