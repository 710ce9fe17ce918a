"""Postings: per document and concept, what the ranking reads of the document's annotations.

Ranking a question reads, for every document that has a question concept c among the candidate
concepts of some annotation, three numbers (:func:`~kg_rag.pipeline.retrieve.score`,
:mod:`~kg_rag.pipeline.relevance`):

* ``kgr:labelCount`` — how many of the document's annotations have c among their candidates
  (label matching);
* ``kgr:agreementSum`` — the sum over those annotations of the probability their decision gives
  c (1 for an annotation without a decision): the expected number of them that mean c;
* ``kgr:meaningProbability`` — the probability that at least one of them means c,
  1 − Π (1 − p), an annotation without a decision counting 1/k for each of its k candidate
  concepts (an unambiguous one: 1).

Reading them from the annotations and their decisions costs a row per annotation and candidate
sense (bench/ANALYSIS.md: ~3,100 rows a question at 400 documents); they are therefore written
with the document, one node per (document, concept) in the document's graph::

    <doc#k…> kgr:postingConcept <c> ; kgr:labelCount 2 ;
             kgr:agreementSum 1.35e0 ; kgr:meaningProbability 9.2e-1 .

and the ranking reads one row per (document, concept). They are derived data: a pure function of
the document's annotations and the decisions they point at (decisions never change under their
IRI), written in the same update as the annotations (:func:`posting_quads`), rewritten when
``redecide`` re-points an annotation, and derived once for documents indexed before kg-rag kept
them (:func:`ensure`; such a document is marked by the absence of ``kgr:postingsVersion``; after indexing,
or once they are derived, the triple ``<…/graph/postings> kgr:postingsVersion 1`` in its own
graph says that every document has them, and later processes skip the check; ranking itself
writes nothing unless it has to derive). A document written in several updates has one node per
update and concept; the reader sums them.

The same numbers are also kept as arrays beside the store (:mod:`.posting_index`); :func:`gather`
reads those while they are current, and the posting nodes otherwise.
"""

from __future__ import annotations

import logging
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.derived import Derived, Slot, Table
from kg_rag.errors import StoreError
from kg_rag.model import Mention, Selection
from kg_rag.namespaces import KGR, XSD
from kg_rag.pipeline import posting_index
from kg_rag.pipeline.record import CANDIDATE, annotation_iri, decision_of, sha256
from kg_rag.store import Change, Store, Values

if TYPE_CHECKING:
    from kg_rag.pipeline.decide import Decided

log = logging.getLogger(__name__)

#: the version of the postings' arithmetic; a document without it gets its postings derived
VERSION = 1


def probabilities(scores: Mapping[str, float]) -> dict[str, float]:
    """A decision's scores as probabilities over its candidate concepts (normalised; the
    selectors' scores already are, up to rounding); readings without probability are left out,
    and a decision without any positive score says nothing."""
    total = sum(v for v in scores.values() if v > 0)
    if total <= 0:
        return {}
    return {c: v / total for c, v in scores.items() if v > 0}


#: decisions never change under their IRI (a hash of selector, mention, candidates and context)
DECISIONS: Table[str, Mapping[str, float]] = Table("decision-probabilities", 50_000)


def decision_probabilities(store: Store, decisions: set[str]) -> dict[str, Mapping[str, float]]:
    """decision IRI → concept → the probability the document's decision gives it
    (:func:`probabilities`; scores summed per concept over its senses), as the store holds them;
    cached per store (a decision never changes under its IRI)."""
    cache = Derived.of(store).table(DECISIONS)
    known, todo = cache.split(decisions)
    missing = [NamedNode(d) for d in todo]
    if missing:
        scores: dict[str, dict[str, float]] = defaultdict(dict)
        for r in store.select("select-decision-scores", values=Values.column("decision", missing)):
            d, c = r["decision"].value, sys.intern(r["candConcept"].value)  # one row per candidate sense
            scores[d][c] = scores[d].get(c, 0.0) + float(r["score"].value)
        for d in todo:
            known[d] = MappingProxyType(probabilities(scores.get(d, {})))
            cache.put(d, known[d])
    return known


def stored_probabilities(mention: Mention, selection: Selection) -> dict[str, float]:
    """concept → the probability the decision gives it, as the store will give it back: each
    candidate's score at the precision it is stored with (``record._dec``), summed per concept."""
    by_id = dict(selection.scores)
    scores: dict[str, float] = {}
    for cand in mention.candidates:
        v = float(f"{float(by_id.get(cand.id, 0.0)):.6f}")
        scores[cand.concept] = scores.get(cand.concept, 0.0) + v
    return probabilities(scores)


@dataclass(slots=True)
class Posting:
    """One (document, concept): annotations counted, summed probability, probability none means it."""

    labels: int = 0
    agreement: float = 0.0
    miss: float = 1.0

    def add(self, p: float, k: int | None) -> None:
        """An annotation meaning the concept with probability ``p`` (its decision's; ``k`` is
        None), or without a decision (``p`` 1 for the ranking; ``k`` its candidate concepts)."""
        self.labels += 1
        self.agreement += p
        self.miss *= 1.0 - (min(1.0, max(0.0, p)) if k is None else 1.0 / max(1, k))

    @property
    def meaning(self) -> float:
        return 1.0 - self.miss

    def merge(self, labels: int, agreement: float, meaning: float) -> None:
        """Another node of the same (document, concept) (a document written in parts)."""
        self.labels += labels
        self.agreement += agreement
        self.miss *= 1.0 - meaning


def _double(v: float) -> Literal:
    return Literal(repr(float(v)), datatype=XSD.double)


def node_quads(doc: NamedNode, concept: str, first_annotation: str, p: Posting) -> list[Quad]:
    """The quads of one posting node (its IRI: the document, the concept and the first annotation
    counted, so that the parts of a document written in several updates do not collide)."""
    node = NamedNode(f"{doc.value}#k{sha256(concept, first_annotation)[:16]}")
    return [Quad(node, KGR.postingConcept, NamedNode(concept), doc),
            Quad(node, KGR.labelCount, Literal(str(p.labels), datatype=XSD.integer), doc),
            Quad(node, KGR.agreementSum, _double(p.agreement), doc),
            Quad(node, KGR.meaningProbability, _double(p.meaning), doc)]


def version_quad(doc: NamedNode) -> Quad:
    return Quad(doc, KGR.postingsVersion, _version(), doc)


def from_readings(doc: NamedNode, readings: Iterable[tuple[str, Sequence[str], Mapping[str, float] | None]]) -> list[Quad]:
    """The posting quads of ``doc`` from its annotations: (annotation IRI, candidate concepts,
    the decision's probabilities per concept or None without a decision), in document order;
    an annotation seen twice counts once."""
    postings: dict[str, Posting] = {}
    first: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for ann, concepts, probs in readings:
        k = len(set(concepts))
        for c in dict.fromkeys(concepts):
            if (ann, c) in seen:
                continue
            seen.add((ann, c))
            p = 1.0 if probs is None else probs.get(c, 0.0)
            postings.setdefault(c, Posting()).add(p, k if probs is None else None)
            first.setdefault(c, ann)
    quads = [version_quad(doc)]
    for c, posting in postings.items():
        quads += node_quads(doc, c, first[c], posting)
    return quads


def posting_quads(doc: NamedNode, decided: Sequence[Decided]) -> list[Quad]:
    """The postings of a document's mentions as :func:`~kg_rag.pipeline.decide.decide` left
    them, for the document's write."""

    def readings() -> Iterable[tuple[str, Sequence[str], Mapping[str, float] | None]]:
        for d in decided:
            probs = None
            if d.decision is not None:
                probs = stored_probabilities(d.mention, d.selection) if d.selection is not None else {}
            yield annotation_iri(doc, d.mention).value, d.mention.concepts, probs

    return from_readings(doc, readings())


def stored_readings(store: Store, docs: Sequence[NamedNode],
                    repoint: Mapping[str, str] | None = None,
                    new_decisions: Sequence[Quad] = ()) -> dict[str, list[tuple[str, list[str], Mapping[str, float] | None]]]:
    """document IRI → its annotations' readings as the store holds them, with the annotations of
    ``repoint`` (annotation IRI → decision IRI) pointing at their new decision, whose candidate
    scores are in ``new_decisions`` unless the store has them."""
    repoint = repoint or {}
    rows = store.select("select-document-readings", values=Values.column("doc", list(docs)))
    fresh: dict[str, dict[str, float]] = defaultdict(dict)
    by_node: dict[str, tuple[str | None, float | None]] = {}
    for q in new_decisions:   # the candidate nodes of decisions about to be written
        s = getattr(q.subject, "value", "")
        if CANDIDATE not in s or q.predicate not in (KGR.concept, KGR.score):
            continue
        c, v = by_node.get(s, (None, None))
        o = getattr(q.object, "value", "")
        if q.predicate == KGR.concept:
            c = o
        else:
            v = float(o)
        by_node[s] = (c, v)
    for node, (c, v) in by_node.items():
        if c is not None and v is not None:
            d = fresh[decision_of(node)]
            d[c] = d.get(c, 0.0) + v
    decs = {repoint.get(r["ann"].value, r["dec"].value) for r in rows if "dec" in r}
    probs: dict[str, Mapping[str, float]] = {d: probabilities(s) for d, s in fresh.items()}
    probs.update(decision_probabilities(store, {d for d in decs if d not in probs}))
    out: dict[str, dict[str, tuple[list[str], Mapping[str, float] | None]]] = defaultdict(dict)
    for r in rows:
        d, ann = r["doc"].value, r["ann"].value
        dec = repoint.get(ann, r["dec"].value) if "dec" in r else None
        entry = out[d].setdefault(ann, ([], probs.get(dec, {}) if dec is not None else None))
        entry[0].append(r["concept"].value)
    return {d: [(a, sorted(cs), p) for a, (cs, p) in sorted(anns.items())] for d, anns in out.items()}


def rewrite(store: Store, doc: NamedNode, repoint: Mapping[str, str],
            new_decisions: Sequence[Quad]) -> tuple[list[Quad], list[Quad]]:
    """(delete, insert): ``doc``'s postings as stored, and as they are once the annotations of
    ``repoint`` point at their new decisions — for the same update as the re-pointing."""
    delete = [Quad(r["p"], pred, r[var], doc)
              for r in store.select("select-document-posting-nodes", bind={"doc": doc})
              for pred, var in ((KGR.postingConcept, "concept"), (KGR.labelCount, "labels"),
                                (KGR.agreementSum, "agreement"), (KGR.meaningProbability, "meaning"))]
    readings = stored_readings(store, [doc], repoint, new_decisions).get(doc.value, [])
    insert = from_readings(doc, readings)
    return delete, insert


@dataclass(frozen=True, slots=True)
class ConceptPostings:
    """The postings of one concept: per document (by number, ascending) its nodes summed."""

    doc: np.ndarray          # document numbers, ascending, each once
    labels: np.ndarray       # annotations counted (int64)
    agreement: np.ndarray    # their decisions' summed probability of the concept
    miss: np.ndarray         # the probability that none of them means it (1 − meaning)

    def index(self, doc: int) -> int | None:
        """Where document number ``doc`` is in these arrays (None: it has no posting)."""
        i = int(np.searchsorted(self.doc, doc))
        return i if i < len(self.doc) and self.doc[i] == doc else None

    def posting(self, i: int) -> Posting:
        """The ``i``-th document's posting."""
        return Posting(int(self.labels[i]), float(self.agreement[i]), float(self.miss[i]))


@dataclass(frozen=True, slots=True)
class Gathered:
    """:func:`gather`'s answer: documents by number, and the postings of each concept found."""

    docs: Sequence[str]
    concepts: dict[str, ConceptPostings]
    #: how many documents the store has, when known without asking it
    documents: int | None = None


def _summed(doc: np.ndarray, labels: np.ndarray, agreement: np.ndarray,
            meaning: np.ndarray) -> ConceptPostings:
    """One entry per node → one per document, in document order: counts and agreements added,
    the probabilities that a node does not mean the concept multiplied (:meth:`Posting.merge`)."""
    if len(doc) > 1 and not bool(np.all(doc[1:] > doc[:-1])):
        order = np.argsort(doc, kind="stable")
        doc, labels, agreement, meaning = doc[order], labels[order], agreement[order], meaning[order]
    doc, labels = doc.astype(np.int64), labels.astype(np.int64)
    agreement, miss = agreement.astype(np.float64), 1.0 - meaning.astype(np.float64)
    if len(doc) > 1:
        first = np.flatnonzero(np.concatenate(([True], doc[1:] != doc[:-1])))
        if len(first) < len(doc):   # a document written in parts: a node per part
            return ConceptPostings(doc[first], np.add.reduceat(labels, first),
                                   np.add.reduceat(agreement, first), np.multiply.reduceat(miss, first))
    return ConceptPostings(doc, labels, agreement, miss)


def _summed_each(found: posting_index.Found) -> dict[str, ConceptPostings]:
    """:func:`_summed` of each concept found, the conversions done once for all of them: a
    concept whose documents already ascend (each written in one part: nearly all) is a slice of
    the converted columns, the others are summed on their own."""
    b = found.bounds
    # the columns are the index's own copies: converted in place of copied where they can be
    doc, labels = np.asarray(found.cols[0], np.int64), np.asarray(found.cols[1], np.int64)
    agreement = np.asarray(found.cols[2], np.float64)
    miss = 1.0 - np.asarray(found.cols[3], np.float64)
    # the concepts with a row whose next row, of the same concept, does not come after it
    down = np.flatnonzero(doc[1:] <= doc[:-1])
    of = np.searchsorted(b, down, side="right") - 1
    unsorted = set(of[down + 1 < b[of + 1]].tolist())
    out: dict[str, ConceptPostings] = {}
    for q, (c, a, e) in enumerate(zip(found.concepts, b[:-1].tolist(), b[1:].tolist(), strict=True)):
        if e == a:
            continue
        if q in unsorted:
            out[c] = _summed(found.cols[0][a:e], found.cols[1][a:e], found.cols[2][a:e], found.cols[3][a:e])
        else:
            out[c] = ConceptPostings(doc[a:e], labels[a:e], agreement[a:e], miss[a:e])
    return out


def gather(store: Store, concepts: Sequence[str]) -> Gathered:
    """The postings of ``concepts``: from the posting index while it is current
    (:mod:`.posting_index`), else from the store's posting nodes — the same numbers either way."""
    ensure(store)
    if not concepts:
        return Gathered([], {})
    fast = posting_index.arrays(store, concepts)
    if fast is not None:
        docs, found, total = fast
        return Gathered(docs, _summed_each(found), total)
    number: dict[str, int] = {}
    entries: dict[str, tuple[list[int], list[int], list[float], list[float]]] = {}
    for r in store.select("select-document-postings",
                          values=Values.column("concept", [NamedNode(c) for c in concepts])):
        d = r["doc"].value
        n = number.get(d)
        if n is None:
            n = number[d] = len(number)
        e = entries.get(r["concept"].value)
        if e is None:
            e = entries[r["concept"].value] = ([], [], [], [])
        e[0].append(n)
        e[1].append(int(r["labels"].value))
        e[2].append(float(r["agreement"].value))
        e[3].append(float(r["meaning"].value))
    return Gathered(list(number), {
        c: _summed(np.asarray(e[0], np.int64), np.asarray(e[1], np.int64),
                   np.asarray(e[2], np.float64), np.asarray(e[3], np.float64))
        for c in concepts if (e := entries.get(c)) is not None})


def read(store: Store, concepts: Sequence[str]) -> dict[str, dict[str, Posting]]:
    """document IRI → concept → its posting, for the documents with any of ``concepts``."""
    g = gather(store, concepts)
    out: dict[str, dict[str, Posting]] = defaultdict(dict)
    for c, cp in g.concepts.items():
        for i, d in enumerate(cp.doc.tolist()):
            out[g.docs[d]][c] = Posting(int(cp.labels[i]), float(cp.agreement[i]), float(cp.miss[i]))
    return out


# --- documents indexed before postings -------------------------------------------------------

_CHECKED: Slot[bool] = Slot("postings-checked")
BATCH = 200


def ensure(store: Store) -> None:
    """Before ranking: derive the postings of the documents that have none yet (indexed by an
    earlier kg-rag), once per store and process. Ranking writes nothing else: with every
    document in order it reads, and a store that cannot be written (read-only) but has such
    documents is an error, since ranking without their postings would silently leave them out."""
    Derived.of(store).value(_CHECKED, lambda: _check(store, mark=False))


def settle(store: Store) -> None:
    """After indexing (a writer): derive what is missing, then record once, in one triple of
    its own graph, that every document has its postings — so that later processes skip looking
    at every document before they rank; and bring the posting index
    (:mod:`.posting_index`) to the store's stamp."""
    _check(store, mark=True)
    posting_index.refresh(store)


#: where :func:`settle` records that every document has postings
MARKER = NamedNode("https://w3id.org/kg-rag/id/graph/postings")


def _version() -> Literal:
    return Literal(str(VERSION), datatype=XSD.integer)


def _check(store: Store, mark: bool) -> bool:
    if store.ask("ask-postings-complete", bind={"v": _version()}):
        return True
    docs = [r["doc"] for r in store.select("select-documents-without-postings")]
    if docs:
        if store.read_only:
            raise StoreError(f"{len(docs)} document(s) of this store were indexed before kg-rag "
                             f"kept postings for ranking; open it once without --read-only (any "
                             f"kg-rag command that asks or indexes) to derive them")
        log.warning("deriving the ranking postings of %d document(s) indexed by an earlier "
                    "kg-rag", len(docs))
        for i in range(0, len(docs), BATCH):
            part = docs[i:i + BATCH]
            readings = stored_readings(store, part)
            quads: list[Quad] = []
            for doc in part:
                quads += from_readings(doc, readings.get(doc.value, []))
            store.apply(Change(insert=quads))
    if docs or mark:
        store.apply(Change(insert=[Quad(MARKER, KGR.postingsVersion, _version(), MARKER)]))
    return True


__all__ = ["VERSION", "ConceptPostings", "Gathered", "Posting", "gather", "decision_probabilities", "ensure", "settle", "from_readings", "node_quads", "posting_quads",
           "probabilities", "read", "rewrite", "stored_probabilities", "stored_readings",
           "version_quad"]
