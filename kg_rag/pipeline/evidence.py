"""What the store knows about candidate senses, fetched with two batched SPARQL queries.

:func:`fetch_evidence` returns one :class:`~kg_rag.model.SenseEvidence` per candidate: sense-level
evidence (dictionary definitions and examples, usage/register notes, translations) from
``select-sense-evidence`` and concept-level evidence (definitions, examples, scope notes, labels and
lemmas in all languages) from ``select-concept-evidence``. Both are facts of the
loaded vocabularies, shared by every mention that can mean the sense or concept, so they are kept
in tables of the store's registry (:data:`EVIDENCE`, :data:`SENSE_EVIDENCE`,
:class:`kg_rag.derived.Derived`, emptied when a vocabulary is loaded or dropped): indexing a corpus
asks the store once per sense and concept, not once per document.

On an embedded store both come from :mod:`kg_rag.pipeline.evidence_index` instead: the same
queries run once for the whole store and grouped the same way, so a call costs a SQLite lookup
instead of two SPARQL queries (the engine parses and plans each query text anew).

A concept's graph neighbours are not part of its evidence: no selector reads them from here (the
knowledge selector has the concept graph in its knowledge base, an LLM's prompt names the broader
concepts, ``select-concept-hierarchy``), and on a WordNet store they were 36 % of the rows.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pyoxigraph import Literal, NamedNode

from kg_rag.derived import Derived, Table
from kg_rag.model import Candidate, LangText, SenseEvidence
from kg_rag.pipeline.evidence_index import EvidenceIndex, evidence_index
from kg_rag.store import Store, Values
from kg_rag.text.normalise import base_language, nfc

log = logging.getLogger(__name__)
E = TypeVar("E")

BATCH = 400            # IRIs per VALUES block
CACHE_SIZE = 20_000    # concepts kept per store
SENSE_CACHE_SIZE = 50_000  # senses kept per store (most have no sense-level evidence: small entries)


@dataclass(frozen=True, slots=True)
class ConceptEvidence:
    definitions: tuple[LangText, ...] = ()
    examples: tuple[LangText, ...] = ()
    labels: tuple[LangText, ...] = ()
    usage: tuple[LangText, ...] = ()
    broader: tuple[LangText, ...] = ()
    schemes: tuple[LangText, ...] = ()


@dataclass(slots=True)
class _Parts:
    definitions: dict[LangText, None]
    examples: dict[LangText, None]
    labels: dict[LangText, None]
    usage: dict[LangText, None]
    translations: dict[LangText, None]
    broader: dict[LangText, None]
    schemes: dict[LangText, None]

    @classmethod
    def new(cls) -> _Parts:
        return cls({}, {}, {}, {}, {}, {}, {})


@dataclass(frozen=True, slots=True)
class _SenseTexts:
    definitions: tuple[LangText, ...] = ()
    examples: tuple[LangText, ...] = ()
    labels: tuple[LangText, ...] = ()
    usage: tuple[LangText, ...] = ()
    translations: tuple[LangText, ...] = ()


#: concept IRI → its evidence, in the store's registry
EVIDENCE: Table[str, ConceptEvidence] = Table("concept-evidence", CACHE_SIZE)
#: sense IRI → its sense-level evidence, in the store's registry
SENSE_EVIDENCE: Table[str, _SenseTexts] = Table("sense-evidence", SENSE_CACHE_SIZE)


def _text(term: object) -> LangText:
    if isinstance(term, Literal):
        return LangText(nfc(term.value), base_language(term.language))
    if isinstance(term, NamedNode):  # e.g. lexinfo:register values: keep the local name
        v = term.value
        return LangText(v.rsplit("#", 1)[-1].rsplit("/", 1)[-1], "")
    return LangText(nfc(str(term)), "")


def _add(parts: _Parts, kind: str, term: object) -> None:
    add_text(parts, kind, _text(term))


def add_text(parts: _Parts, kind: str, t: LangText) -> None:
    """One row's text into its bucket (first occurrence kept; empty texts dropped)."""
    bucket = {"definition": parts.definitions, "example": parts.examples, "label": parts.labels,
              "usage": parts.usage, "translation": parts.translations,
              "broader": parts.broader, "scheme": parts.schemes}.get(kind)
    if bucket is None:
        raise ValueError(f"unknown evidence kind {kind}")
    if t.text:
        bucket.setdefault(t, None)


def _chunks(items: Sequence[str], n: int) -> Iterable[Sequence[str]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def _pairs(texts: Iterable[LangText]) -> list[list[str]]:
    return [[t.text, t.lang] for t in texts]


def _texts(pairs: Sequence[Sequence[str]]) -> tuple[LangText, ...]:
    return tuple(LangText(t, lang) for t, lang in pairs)


def encode_concept(p: _Parts) -> str:
    """A concept's grouped rows as the evidence index keeps them (JSON)."""
    return json.dumps([_pairs(b) for b in (p.definitions, p.examples, p.labels, p.usage,
                                           p.broader, p.schemes)],
                      ensure_ascii=False, separators=(",", ":"))


def encode_sense(p: _Parts) -> str:
    """A sense's grouped rows as the evidence index keeps them (JSON)."""
    return json.dumps([_pairs(b) for b in (p.definitions, p.examples, p.labels, p.usage,
                                           p.translations)],
                      ensure_ascii=False, separators=(",", ":"))


_NO_CONCEPT_EVIDENCE = ConceptEvidence()


def concept_evidence(store: Store, concepts: Iterable[str]) -> dict[str, ConceptEvidence]:
    """Concept-level evidence for each IRI (from the evidence index on an embedded store, else
    queried and cached)."""
    index = evidence_index(store)
    if index is not None:
        wanted = list(dict.fromkeys(concepts))
        return _concepts_of(wanted, index.records((), wanted)[1])
    return queried_concept_evidence(store, concepts)


def _concepts_of(wanted: Sequence[str], recs: dict[str, object]) -> dict[str, ConceptEvidence]:
    out: dict[str, ConceptEvidence] = {}
    for c in wanted:
        rec = recs.get(c)
        out[c] = (ConceptEvidence(*(_texts(b) for b in rec)) if isinstance(rec, list)
                  else _NO_CONCEPT_EVIDENCE)
    return out


def _senses_of(recs: dict[str, object]) -> dict[str, _SenseTexts]:
    return {s: _SenseTexts(*(_texts(b) for b in rec)) for s, rec in recs.items()
            if isinstance(rec, list)}


def queried_concept_evidence(store: Store, concepts: Iterable[str]) -> dict[str, ConceptEvidence]:
    """Concept-level evidence for each IRI, queried per call (cached); where each concept stands
    in its thesaurus too (the LLM's rich prompt names it)."""
    return _queried(store, EVIDENCE, concepts, "concept",
                    ("select-concept-evidence", "select-concept-hierarchy"),
                    lambda p: ConceptEvidence(tuple(p.definitions), tuple(p.examples), tuple(p.labels),
                                              tuple(p.usage), tuple(p.broader), tuple(p.schemes)))


def _queried_sense_parts(store: Store, senses: Sequence[str]) -> dict[str, _SenseTexts]:
    """Sense-level evidence of each IRI, queried per call (cached)."""
    return _queried(store, SENSE_EVIDENCE, senses, "sense", ("select-sense-evidence",),
                    lambda p: _SenseTexts(tuple(p.definitions), tuple(p.examples), tuple(p.labels),
                                          tuple(p.usage), tuple(p.translations)))


def _queried(store: Store, table: Table[str, E], iris: Iterable[str], column: str, queries: Sequence[str],
             build: Callable[[_Parts], E]) -> dict[str, E]:
    """``build`` of the rows ``queries`` give each IRI (bound as ``column``), in batches of
    :data:`BATCH`; kept in the store's derived ``table``, which answers what it holds."""
    cache = Derived.of(store).table(table)
    out, missing = cache.split(iris)
    for chunk in _chunks(missing, BATCH):
        parts = {i: _Parts.new() for i in chunk}
        values = Values.column(column, [NamedNode(i) for i in chunk])
        for name in queries:
            for r in store.select(name, values=values):
                _add(parts[r[column].value], r["kind"].value, r["text"])
        for i, p in parts.items():
            built = build(p)
            cache.put(i, built)
            out[i] = built
    return out


_NO_SENSE_TEXTS = _SenseTexts()


def _once(texts: tuple[LangText, ...]) -> tuple[LangText, ...]:
    return tuple(dict.fromkeys(texts))


def fetch_evidence(store: Store, candidates: Sequence[Candidate]) -> tuple[SenseEvidence, ...]:
    """One :class:`SenseEvidence` per candidate, in order (from the evidence index on an embedded
    store, else two batched queries with cached concepts)."""
    senses = list(dict.fromkeys(c.sense for c in candidates if c.sense))
    index = evidence_index(store)
    if index is None:
        by_sense = _queried_sense_parts(store, senses) if senses else {}
        by_concept = queried_concept_evidence(store, [c.concept for c in candidates])
    else:  # one lookup for all of them that are not decoded yet
        concepts = list(dict.fromkeys(c.concept for c in candidates))
        by_sense, by_concept = _indexed(store, index, senses, concepts)
    return _assemble(candidates, by_sense, by_concept)


#: the evidence index's records decoded (JSON into texts: the same senses and concepts come back
#: in the candidates of many documents), in the store's registry like the queried ones
INDEXED_SENSE_EVIDENCE: Table[str, _SenseTexts] = Table("indexed-sense-evidence", SENSE_CACHE_SIZE)
INDEXED_EVIDENCE: Table[str, ConceptEvidence] = Table("indexed-concept-evidence", CACHE_SIZE)


def _indexed(store: Store, index: EvidenceIndex, senses: Sequence[str],
             concepts: Sequence[str]) -> tuple[dict[str, _SenseTexts], dict[str, ConceptEvidence]]:
    """The evidence of ``senses`` and ``concepts`` from the evidence index (decoded ones from the
    registry's tables; a sense without a record is kept as :data:`_NO_SENSE_TEXTS`)."""
    derived = Derived.of(store)
    sense_cache = derived.table(INDEXED_SENSE_EVIDENCE)
    concept_cache = derived.table(INDEXED_EVIDENCE)
    by_sense, senses_left = sense_cache.split(senses)
    by_concept, concepts_left = concept_cache.split(concepts)
    if senses_left or concepts_left:
        s_recs, c_recs = index.records(senses_left, concepts_left)
        found = _senses_of(s_recs)
        for s in senses_left:
            texts = found.get(s, _NO_SENSE_TEXTS)
            sense_cache.put(s, texts)
            by_sense[s] = texts
        for c, ev in _concepts_of(concepts_left, c_recs).items():
            concept_cache.put(c, ev)
            by_concept[c] = ev
    return by_sense, by_concept


def queried_evidence(store: Store, candidates: Sequence[Candidate]) -> tuple[SenseEvidence, ...]:
    """:func:`fetch_evidence` through the per-call queries on any store (what the evidence
    index must agree with)."""
    senses = list(dict.fromkeys(c.sense for c in candidates if c.sense))
    by_sense = _queried_sense_parts(store, senses) if senses else {}
    by_concept = queried_concept_evidence(store, [c.concept for c in candidates])
    return _assemble(candidates, by_sense, by_concept)


def _assemble(candidates: Sequence[Candidate], by_sense: dict[str, _SenseTexts],
              by_concept: dict[str, ConceptEvidence]) -> tuple[SenseEvidence, ...]:
    out = []
    for cand in candidates:
        ce = by_concept[cand.concept]
        sp = (by_sense.get(cand.sense) if cand.sense else None) or _NO_SENSE_TEXTS
        # a sense-only reading is its own concept (DATA-MODEL.md): the same statements come
        # back at both levels, so each text is kept once
        out.append(SenseEvidence(
            candidate=cand,
            definitions=_once(sp.definitions + ce.definitions),
            examples=_once(sp.examples + ce.examples),
            labels=_once(sp.labels + ce.labels),
            translations=sp.translations,
            usage=_once(sp.usage + ce.usage),
            broader=ce.broader,
            schemes=ce.schemes,
        ))
    return tuple(out)
