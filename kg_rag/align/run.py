"""One alignment of a dictionary source (or a second thesaurus) with a thesaurus source: read,
score, assign.

Nothing is written here (:mod:`kg_rag.align.record` writes); :func:`propose` is pure over the
store's contents, so tests and the evaluation call it directly.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace

from kg_rag.align import gather
from kg_rag.align.model import Proposal
from kg_rag.align.score import Scored, Scorer, assign
from kg_rag.errors import InputError
from kg_rag.store import Store

log = logging.getLogger(__name__)


def propose(store: Store, dictionary: str, thesaurus: str,
            skip_senses: Iterable[str] = (),
            rejected: Iterable[tuple[str, str]] = (),
            linked: Mapping[str, str] | None = None) -> tuple[list[Proposal], int, int]:
    """Proposals for the senses of graph ``dictionary`` against the concepts of graph
    ``thesaurus``: (proposals, senses considered, senses with a candidate). Senses in
    ``skip_senses`` (already linked) are left out; ``rejected`` (sense, concept) pairs are
    never proposed again; ``linked`` gives senses the concept an accepted alignment with
    another thesaurus gave them (their links to this one are then skos:closeMatch)."""
    concepts = gather.read_concepts(store, thesaurus)
    if not concepts:
        raise InputError(f"source {thesaurus} has no skos:Concept; give a thesaurus as the "
                         "second source")
    senses = gather.read_senses(store, dictionary)
    # two thesauri: the first one's concepts are aligned as senses that have their concept
    # (accepted links state skos:closeMatch, so both are one meaning, DATA-MODEL.md)
    first = {} if senses else gather.read_concepts(store, dictionary)
    if not senses and not first:
        raise InputError(f"source {dictionary} has no lexical entry with senses and no "
                         "skos:Concept; give a dictionary or a thesaurus as the first source")
    if first:
        senses = gather.concepts_as_senses(first)
    for s, c in (linked or {}).items():
        if s in senses and senses[s].concept is None:
            senses[s] = replace(senses[s], concept=c)
    skip = set(skip_senses)
    # already in this thesaurus (a concept is never aligned with itself)
    skip |= {s for s, d in senses.items() if d.concept in concepts}
    todo = [s for s in senses if s not in skip]
    log.info("aligning %d senses of %s with %d concepts of %s", len(todo), dictionary,
             len(concepts), thesaurus)
    scorer = Scorer(concepts)
    if not first:  # a thesaurus's concepts carry their labels and texts already
        senses = gather.add_equivalents(store, dictionary, senses, todo)
    no: dict[str, set[str]] = {}
    for s, c in rejected:
        no.setdefault(s, set()).add(c)
    found = [s for s in todo if scorer.index_hits_any(senses[s])]  # before reading their texts
    if not first:
        senses = gather.add_texts(store, dictionary, senses, found)
    scored: dict[str, list[Scored]] = {s: scorer.candidates(senses[s], exclude=no.get(s, ()))
                                       for s in found}
    proposals = assign([senses[s] for s in found], scored)
    return proposals, len(todo), sum(1 for v in scored.values() if v)
