"""Corpus sense counts (WordNet ``cntlist.rev``, loaded by :mod:`loaders.cntlist`) for the
frequency prior (:func:`kg_rag.senses.knowledge.prior.count_prior`).

Read once per store with ``select-sense-counts`` (a few tens of thousands of rows) and kept in
the store's registry, so loading or dropping the counts file is seen by the next selector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kg_rag.derived import Derived, Slot
from kg_rag.store import Store


@dataclass(frozen=True, slots=True)
class SenseCounts:
    """Tag counts of senses and, summed over a concept's senses, of concepts (for another
    language's candidates, which reach the English senses through the shared ILI concept)."""

    by_sense: Mapping[str, int] = field(default_factory=dict)    # sense IRI → count
    by_concept: Mapping[str, int] = field(default_factory=dict)  # concept IRI → Σ its senses' counts

    def __bool__(self) -> bool:
        return bool(self.by_sense)


#: the sense counts, in the store's registry
COUNTS: Slot[SenseCounts] = Slot("sense-counts")


def sense_counts(store: Store) -> SenseCounts:
    """The sense counts of ``store`` (empty when no counts file is loaded)."""
    return Derived.of(store).value(COUNTS, lambda: _build(store))


def _build(store: Store) -> SenseCounts:
    by_sense: dict[str, int] = {}
    by_concept: dict[str, int] = {}
    for r in store.select("select-sense-counts"):
        sense, n = r["sense"].value, int(r["count"].value)
        if sense in by_sense:  # one sense, one key: a second row is the same record seen twice
            continue
        by_sense[sense] = n
        concept = r["concept"].value
        by_concept[concept] = by_concept.get(concept, 0) + n
    return SenseCounts(by_sense, by_concept)
