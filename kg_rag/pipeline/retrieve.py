"""Rank documents by concepts: the question's senses, SKOS/WordNet expansion at lower weight,
concept rarity (idf) — language-independent, because documents meet the question on concepts,
not words.

A document's score for a query concept is the sum of two pieces of evidence, computed by the same
arithmetic (question weight × expansion weight × focus boost × idf × the document's annotations):

* **label matching** — the question mention looks for each of its n candidate concepts at 1/n and
  a document annotation counts 1 for every concept among its candidates (``wsd="none"`` ranks by
  this alone);
* **expected sense agreement** (``match="fused"``, every selector) — the probability that the
  question's mention and the document's annotation mean this concept, p_question(c) ×
  p_document(c), from the two decisions' per-candidate probabilities (an unambiguous mention or
  annotation: 1). Summed over concepts this is the probability that both mean the same thing.

So a decision can raise a document of the chosen reading by at most one label match and never
drop a document below label matching's evidence: a wrong or coin-flip decision on either side
reorders the documents that share the word, it does not remove the relevant ones.

Every parameter is a field of one :class:`~kg_rag.pipeline.ranking_config.RetrievalConfig`;
:func:`score` is the one arithmetic, and returns each result's contributions, which ``rank``
sums and ``explain --document`` replays (:mod:`kg_rag.explain.result`). It reads the documents'
evidence from their postings (:mod:`.postings`: per document and concept, the annotations
counted and their decisions' summed probability), written when the documents were indexed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar, cast

import numpy as np
from pyoxigraph import NamedNode

from kg_rag.derived import Derived, Table
from kg_rag.model import Contribution, MatchedConcept, Mention, Result, Selection
from kg_rag.pipeline import posting_index
from kg_rag.pipeline.kept_facts import Kind, kept_facts
from kg_rag.pipeline.postings import (
    ConceptPostings,
    Gathered,
    Posting,
    gather,
    probabilities,
    stored_readings,
)
from kg_rag.pipeline.ranking_config import DEFAULT, RetrievalConfig
from kg_rag.pipeline.relevance import Relevance, expansions, readings_of, relevance
from kg_rag.store import Store, Values
from kg_rag.text.normalise import base_language


@dataclass(frozen=True, slots=True)
class QueryConcept:
    """A concept the ranking looks for, at ``weight``. An expansion keeps where it came from:
    the question concept it expands (``source``), the relation (its IRI) and that relation's
    weight, so ``weight`` = ``expansion_weight`` × ``source.weight`` (``probability`` alike).

    ``weight``: the label-matching weight (1/n over the mention's n candidate concepts);
    ``probability``: how likely the question's decision says the mention means this concept
    (0 under label matching alone)."""

    iri: str
    weight: float
    probability: float = 0.0
    focus: bool = False
    decision: str | None = None
    mention: int | None = None              # the question mention whose reading set the weight
    source: QueryConcept | None = None
    relation: str | None = None
    expansion_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class QuestionReading:
    """What one mention of a question looks for: concept → label weight (1/n) and concept →
    probability that the mention means it (:func:`mention_reading`)."""

    start: int
    end: int
    weights: Mapping[str, float]
    probabilities: Mapping[str, float]
    decision: str | None = None


def mention_reading(mention: Mention, selection: Selection | None, decision: str | None,
                    label_matching: bool) -> QuestionReading:
    """What one mention of a question looks for: every candidate concept at 1/n (label
    matching); and, unless ``label_matching``, the probability that the mention means each — 1
    for an unambiguous mention, else its decision's per-candidate probabilities summed per
    concept (:func:`probabilities`; nothing when nobody decided)."""
    weights = {c: 1.0 / len(mention.concepts) for c in mention.concepts}
    if label_matching:
        probs: dict[str, float] = {}
    elif not mention.ambiguous:
        probs = {c: 1.0 for c in mention.concepts}
    elif selection is None:
        probs = {}
    else:
        by_id = dict(selection.scores)
        scores: dict[str, float] = {}
        for cand in mention.candidates:
            scores[cand.concept] = scores.get(cand.concept, 0.0) + by_id.get(cand.id, 0.0)
        probs = probabilities(scores)
    return QuestionReading(mention.start, mention.end, weights, probs, decision)


def question_concepts(mentions: Sequence[QuestionReading],
                      focus: tuple[int, int] | None = None) -> list[QueryConcept]:
    """The query concepts of a question's mentions: a concept looked for by several mentions
    keeps the larger weight, and is the focus if a focus mention (:func:`focus_mentions`) looks
    for it. Mentions in text order, concepts in IRI order, so replaying a recorded question
    (``explain``) builds the same query."""
    focused = focus_mentions([(m.start, m.end) for m in mentions], focus)
    concepts: dict[str, QueryConcept] = {}
    for i in sorted(range(len(mentions)), key=lambda j: (mentions[j].start, -mentions[j].end)):
        m, is_focus = mentions[i], i in focused
        for c in sorted(set(m.weights) | set(m.probabilities)):
            w, p = m.weights.get(c, 0.0), m.probabilities.get(c, 0.0)
            prev = concepts.get(c)
            if prev is None:
                concepts[c] = QueryConcept(c, w, p, is_focus, m.decision, i)
            elif prev.weight < w or (is_focus and not prev.focus):
                concepts[c] = QueryConcept(c, max(w, prev.weight), max(p, prev.probability),
                                           is_focus or prev.focus, m.decision, i)
            elif prev.probability < p:
                concepts[c] = replace(prev, probability=p)
    return list(concepts.values())


def expand(store: Store, concepts: Iterable[QueryConcept],
           config: RetrievalConfig = DEFAULT) -> list[QueryConcept]:
    """Add neighbours of the concepts at the config's expansion weight × their weight (max over
    paths); a mapping to the same meaning (``config.same_meaning``) keeps the focus."""
    base = {c.iri: c for c in concepts}
    weights = config.weights
    if not base or not any(weights.values()):
        return list(base.values())
    best: dict[str, QueryConcept] = dict(base)
    found = neighbours(store, list(base))
    for c, src in base.items():   # in the concepts' order, each one's neighbours in IRI order
        for rel_iri, n in found[c]:
            rel = rel_iri.rsplit("#", 1)[-1]
            factor = weights.get(rel, 0.0)
            w, p = factor * src.weight, factor * src.probability
            focus = src.focus and rel in config.same_meaning
            if w <= 0:
                continue
            cur = best.get(n)
            if cur is None or (cur.iri not in base and (cur.weight, cur.probability, cur.focus) < (w, p, focus)):
                best[n] = QueryConcept(n, w, p, focus, src.decision, src.mention, src, rel_iri, factor)
    return list(best.values())


V = TypeVar("V")

#: concept → its (relation, neighbour) pairs: vocabulary facts, kept until the vocabularies change
#: (and between processes: :mod:`~kg_rag.pipeline.kept_facts`)
NEIGHBOURS: Table[str, tuple[tuple[str, str], ...]] = Table("concept-neighbours", 50_000)
#: concept → its labels (text, language tag, kind), the same
LABELS: Table[str, tuple[tuple[str, str | None, str], ...]] = Table("concept-labels", 50_000)


def _vocabulary_facts(store: Store, spec: Table[str, V], kind: Kind, iris: Sequence[str],
                      ask: Callable[[list[str]], dict[str, V]]) -> dict[str, V]:
    """``kind`` facts of ``iris``: from this process's table ``spec``, else from the facts other
    processes kept (:mod:`~kg_rag.pipeline.kept_facts`; JSON lists come back as tuples), else
    from the store (``ask`` the IRIs still missing; then kept in both)."""
    cache = Derived.of(store).table(spec)
    known, todo = cache.split(iris)
    kept = kept_facts(store) if todo else None
    if kept is not None:
        for c, rows in kept.get_many(kind, todo).items():
            known[c] = cast(V, tuple(tuple(r) for r in rows))
            cache.put(c, known[c])
        todo = [c for c in todo if c not in known]
    if todo:
        got = ask(todo)
        for c in todo:
            known[c] = got[c]
            cache.put(c, got[c])
        if kept is not None:
            kept.put_many(kind, {c: got[c] for c in todo})
    return known


def neighbours(store: Store, iris: Sequence[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """concept → its thesaurus and wordnet neighbours and mappings (``select-concept-neighbours``)
    as (relation IRI, neighbour IRI), sorted — the same on every engine."""

    def ask(todo: list[str]) -> dict[str, tuple[tuple[str, str], ...]]:
        got: dict[str, set[tuple[str, str]]] = {c: set() for c in todo}
        for r in store.select("select-concept-neighbours",
                              values=Values.column("concept", [NamedNode(i) for i in todo])):
            got[r["concept"].value].add((r["rel"].value, r["neighbour"].value))
        return {c: tuple(sorted(pairs)) for c, pairs in got.items()}

    return _vocabulary_facts(store, NEIGHBOURS, "neighbours", iris, ask)


def concept_labels(store: Store, iris: Iterable[str], lang: str) -> dict[str, str]:
    """A display label per concept, preferring ``lang``, then English, then any."""
    iris = list(dict.fromkeys(iris))
    if not iris:
        return {}

    def ask(todo: list[str]) -> dict[str, tuple[tuple[str, str | None, str], ...]]:
        got: dict[str, set[tuple[str, str | None, str]]] = {c: set() for c in todo}
        for r in store.select("select-concept-labels",
                              values=Values.column("concept", [NamedNode(i) for i in todo])):
            lit = r["label"]
            got[r["concept"].value].add((lit.value, getattr(lit, "language", None), r["kind"].value))
        return {c: tuple(sorted(labels, key=lambda x: (x[0], x[1] or "", x[2]))) for c, labels in got.items()}

    known = _vocabulary_facts(store, LABELS, "labels", iris, ask)
    rank_kind = {"pref": 0, "alt": 1, "lemma": 2}
    best: dict[str, tuple[tuple[int, int, str], str]] = {}
    for c in iris:
        for text, tag, kind in known[c]:
            base = base_language(tag)
            key = (0 if base == lang else 1 if base == "en" else 2, rank_kind.get(kind, 3), text)
            if c not in best or key < best[c][0]:
                best[c] = (key, text)
    return {c: v[1] for c, v in best.items()}


def concept_glosses(store: Store, iris: Iterable[str], lang: str, width: int = 90) -> dict[str, str]:
    """A short definition per concept to tell readings apart, preferring ``lang``, then English,
    then any language (a Hebrew WordNet synset shows its English gloss through the ILI); cut to
    ``width`` characters at a word boundary. Concepts without a definition are left out."""
    iris = list(dict.fromkeys(iris))
    if not iris:
        return {}
    rows = store.select("select-concept-definitions",
                        values=Values.column("concept", [NamedNode(i) for i in iris]))
    best: dict[str, tuple[tuple[int, str], str]] = {}
    for r in rows:
        lit = r["text"]
        tag = base_language(getattr(lit, "language", None))
        key = (0 if tag == lang else 1 if tag == "en" else 2, lit.value)
        c = r["concept"].value
        if c not in best or key < best[c][0]:
            best[c] = (key, lit.value)
    return {c: _cut(" ".join(v[1].split()), width) for c, v in best.items()}


def _cut(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    head = text[: width - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(" ,;:") + "…"


def focus_mentions(spans: Sequence[tuple[int, int]], focus: tuple[int, int] | None) -> set[int]:
    """Which of a question's mention spans a focus span selects: those that match it best
    (overlap minus the part outside the focus), so a phrase selected as a whole is the focus and
    not the words nested in it ("made up", not "made"), and a word selected inside a phrase is
    that word. No overlap, no focus."""
    if focus is None:
        return set()
    s, e = focus
    fit = {i: min(b, e) - max(a, s) - (max(0, s - a) + max(0, b - e))
           for i, (a, b) in enumerate(spans) if a < e and s < b}
    if not fit:
        return set()
    best = max(fit.values())
    return {i for i, f in fit.items() if f == best}


@dataclass(frozen=True, slots=True)
class Term:
    """What one query concept added to one document: ``counted`` = focus × idf ×
    (weight × label + probability × agreement), the query concept's weight and probability
    (expansion included) times the document's label and agreement evidence."""

    concept: str
    focus: float
    idf: float
    label: float        # the document's annotations of the concept, counted 1 each (1 + ln above 1)
    agreement: float    # the same, each counted by its decision's probability of the concept
    counted: float


class Scores:
    """The ranking arithmetic's working (:func:`score`): every document's score, computed as
    arrays over all documents at once, and per document — when asked for it — what each matched
    concept added (:class:`Term`) and its postings."""

    def __init__(self, concepts: dict[str, QueryConcept], gathered: Gathered,
                 terms: list[_ConceptTerms], totals: np.ndarray) -> None:
        #: the query concepts by IRI
        self.concepts = concepts
        self._gathered = gathered
        self._terms = terms
        self._totals = totals
        self._numbers: dict[str, int] | None = None
        self._seen: dict[str, int] = {}   # the documents ``ordered`` gave, by IRI
        #: concept → its column in :attr:`_where`
        self._column = {c: i for i, c in enumerate(gathered.concepts)}
        #: document number → per concept (by column) its position in the concept's postings,
        #: -1 where it has none (:meth:`prefetch`)
        self._where: dict[int, list[int]] = {}
        #: document → concept → its posting (annotations counted, summed probability, meaning)
        self.postings: Mapping[str, dict[str, Posting]] = _DocumentPostings(self)

    def number(self, doc: str) -> int | None:
        """The document's number among the postings read (None: it has none)."""
        n = self._seen.get(doc)
        if n is None:
            if self._numbers is None:   # all of them: only for a document ``ordered`` did not give
                self._numbers = {d: i for i, d in enumerate(self._gathered.docs)}
            n = self._numbers.get(doc)
        return n

    def prefetch(self, docs: Iterable[str]) -> None:
        """Find the documents ``docs`` in every concept's postings at once — one search per
        concept over all of them instead of one per concept and document — for the
        :meth:`terms` and :attr:`postings` of the documents about to be shown."""
        nums = [n for d in docs if (n := self.number(d)) is not None and n not in self._where]
        if not nums:
            return
        want = np.asarray(nums, dtype=np.int64)
        found = list(self._gathered.concepts.values())
        if not found:
            return
        # (concept, document) as one number, ascending through the concepts' postings end to
        # end: one search for every pair
        cols, span = len(found), max(len(self._gathered.docs), 1)
        lens = np.fromiter((len(cp.doc) for cp in found), np.int64, cols)
        starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
        keys = np.repeat(np.arange(cols, dtype=np.int64) * span, lens) + np.concatenate(
            [cp.doc for cp in found])
        asked = (np.arange(cols, dtype=np.int64)[None, :] * span + want[:, None]).ravel()
        pos = np.searchsorted(keys, asked)
        hit = pos < len(keys)
        hit[hit] = keys[pos[hit]] == asked[hit]
        table = np.where(hit, pos - np.tile(starts, len(want)), -1).reshape(len(want), cols).tolist()
        for n, row in zip(nums, table, strict=True):
            self._where[n] = row

    def _position(self, n: int, concept: str, postings: ConceptPostings) -> int | None:
        """Where document ``n`` is in ``concept``'s postings (None: not there)."""
        row = self._where.get(n)
        if row is None:
            return postings.index(n)
        i = row[self._column[concept]]
        return None if i < 0 else i

    def score(self, doc: str) -> float:
        """The sum of the document's contributions (in their order)."""
        n = self.number(doc)
        return 0.0 if n is None or n >= len(self._totals) else float(self._totals[n])

    def terms(self, doc: str) -> list[Term]:
        """What each query concept added to ``doc``, in the order of the query concepts."""
        n = self.number(doc)
        out: list[Term] = []
        if n is None:
            return out
        for t in self._terms:
            i = self._position(n, t.concept, t.postings)
            if i is not None:
                out.append(Term(t.concept, t.focus, t.idf, float(t.label[i]), float(t.agreement[i]),
                                float(t.counted[i])))
        return out

    def contributions(self, doc: str) -> tuple[Contribution, ...]:
        out = []
        postings = self.postings.get(doc, {})
        for t in self.terms(doc):
            qc = self.concepts[t.concept]
            src = qc.source or qc
            out.append(Contribution(src.iri, t.concept, qc.relation, src.weight, src.probability,
                                    qc.expansion_weight, t.focus, t.idf, t.label, t.agreement,
                                    postings[t.concept].labels, t.counted))
        return tuple(out)

    def documents(self) -> list[str]:
        """Every document with a posting of a query concept, in number order."""
        found = self._gathered.concepts
        if not found:
            return []
        nums = np.unique(np.concatenate([cp.doc for cp in found.values()]))
        return [self._gathered.docs[i] for i in nums.tolist()]

    def ordered(self, first: int = 32) -> Iterator[tuple[float, str]]:
        """(score, document) of the documents scoring above 0, best first, ties by IRI —
        sorted a growing top at a time (only the head of a long list is usually read)."""
        pos = np.flatnonzero(self._totals > 0)
        vals = self._totals[pos]
        docs = self._gathered.docs
        n, done = max(1, first), 0
        while True:
            if n >= len(pos):
                chosen = pos
            else:   # the n best, and every document tied with the n-th
                kth = np.partition(vals, len(vals) - n)[len(vals) - n]
                chosen = pos[vals >= kth]
            head = sorted((-float(self._totals[i]), docs[i], i) for i in chosen.tolist())
            for neg, d, i in head[done:]:
                self._seen[d] = i
                yield -neg, d
            done = len(head)
            if len(chosen) == len(pos):
                return
            n *= 4


class _DocumentPostings(Mapping[str, dict[str, Posting]]):
    """document IRI → concept → its posting, spelled out per document when asked."""

    def __init__(self, scores: Scores) -> None:
        self._scores = scores
        self._cache: dict[str, dict[str, Posting]] = {}

    def __getitem__(self, doc: str) -> dict[str, Posting]:
        got = self._cache.get(doc)
        if got is None:
            n = self._scores.number(doc)
            if n is None:
                raise KeyError(doc)
            got = {}
            for c, cp in self._scores._gathered.concepts.items():
                i = self._scores._position(n, c, cp)
                if i is not None:
                    got[c] = cp.posting(i)
            if not got:
                raise KeyError(doc)
            self._cache[doc] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._scores.documents())

    def __len__(self) -> int:
        return len(self._scores.documents())


@dataclass(frozen=True, slots=True)
class _ConceptTerms:
    """One query concept's part of every document's score (arrays over its postings)."""

    concept: str
    postings: ConceptPostings
    focus: float
    idf: float
    label: np.ndarray
    agreement: np.ndarray
    counted: np.ndarray


def _tf(total: np.ndarray) -> np.ndarray:
    """Evidence summed over a document's annotations, sublinear above 1 (1 + ln)."""
    total = total.astype(np.float64)
    return np.where(total <= 1, total, 1.0 + np.log(np.maximum(total, 1.0)))


def score(store: Store, concepts: Sequence[QueryConcept], config: RetrievalConfig = DEFAULT) -> Scores:
    """Every document meeting the query concepts, with what each concept added to its score
    (:class:`Term`): focus boost × rarity (idf) × (label weight × the document's annotations of
    the concept + probability × the same annotations weighed by their decisions' probability of
    it), read from the documents' postings (:mod:`.postings`). ``config.match`` ``label`` leaves
    the second term out. A document's score sums its terms in the order of ``concepts``."""
    weight = {c.iri: c for c in concepts}
    found = gather(store, list(weight))
    total = found.documents
    if total is None:
        n_rows = store.select("select-document-count")
        total = int(n_rows[0]["n"].value) if n_rows else 0
    fused = config.match == "fused"
    present = [(c, qc, cp) for c, qc in weight.items() if (cp := found.concepts.get(c)) is not None]
    if not present:
        return Scores(weight, found, [], np.zeros(len(found.docs), dtype=np.float64))
    # every concept's postings end to end (in the concepts' order), its arithmetic done once
    lens = np.fromiter((len(cp.doc) for _, _, cp in present), np.int64, len(present))
    bounds = np.concatenate(([0], np.cumsum(lens)))
    doc = np.concatenate([cp.doc for _, _, cp in present])
    label = _tf(np.concatenate([cp.labels for _, _, cp in present]))
    agreement = (_tf(np.concatenate([cp.agreement for _, _, cp in present])) if fused
                 else np.zeros(len(doc)))
    idf = [math.log(1.0 + total / max(1, len(cp.doc))) for _, _, cp in present]
    focus = [config.focus_boost if qc.focus else 1.0 for _, qc, _ in present]
    per = np.asarray([f * i for f, i in zip(focus, idf, strict=True)], np.float64)
    weights = np.asarray([qc.weight for _, qc, _ in present], np.float64)
    probability = np.asarray([qc.probability if fused else 0.0 for _, qc, _ in present], np.float64)
    counted = np.repeat(per, lens) * (np.repeat(weights, lens) * label
                                      + np.repeat(probability, lens) * agreement)
    # a document's score: its terms summed in the concepts' order (rows are in that order)
    totals = np.bincount(doc, weights=counted, minlength=len(found.docs)).astype(np.float64, copy=False)
    terms = [_ConceptTerms(c, cp, focus[q], idf[q], label[a:e], agreement[a:e], counted[a:e])
             for q, ((c, _, cp), a, e) in enumerate(zip(present, bounds[:-1].tolist(),
                                                         bounds[1:].tolist(), strict=True))]
    return Scores(weight, found, terms, totals)


def document_readings(store: Store, doc: str, concepts: Iterable[str]) -> dict[str, dict[str, float]]:
    """concept → annotation → the probability its decision gives the concept (1 without a
    decision), for the annotations of ``doc`` that have one of ``concepts`` among their
    candidates: what each posting of the document sums (``explain --document`` shows them)."""
    want = set(concepts)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for ann, cands, probs in stored_readings(store, [NamedNode(doc)]).get(doc, []):
        for c in cands:
            if c in want:
                out[c][ann] = 1.0 if probs is None else probs.get(c, 0.0)
    return dict(out)


@dataclass(frozen=True, slots=True)
class Ranked:
    """:func:`ranked`'s answer: the results, and the documents the minimum relevance cut
    (how many, and the largest relevance among them; 0 when none)."""

    results: list[Result]
    cut: int = 0
    best_cut: float = 0.0


def rank(store: Store, concepts: list[QueryConcept], k: int, lang: str,
         config: RetrievalConfig = DEFAULT, exclude_ids: frozenset[str] = frozenset()) -> list[Result]:
    """The top ``k`` documents for weighted query concepts (:func:`score`), each with the
    contributions its score sums (``config.match``: ``label`` — label matching alone; ``fused``
    — label matching plus expected sense agreement) and its relevance (:mod:`.relevance`)."""
    return ranked(store, concepts, k, lang, config, exclude_ids).results


def ranked(store: Store, concepts: list[QueryConcept], k: int, lang: str,
           config: RetrievalConfig = DEFAULT, exclude_ids: frozenset[str] = frozenset(),
           readings: Sequence[QuestionReading] | None = None,
           focus: tuple[int, int] | None = None, min_relevance: float = 0.0) -> Ranked:
    """:func:`rank`, the documents below ``min_relevance`` left out before the top ``k`` are
    taken. ``readings``: the question's mentions (:func:`mention_reading`) and ``focus`` its
    focus span, for the relevance; without them the query concepts' own (unexpanded) readings."""
    if not concepts or k <= 0:
        return Ranked([])
    weight = {c.iri: c for c in concepts}
    scores = score(store, concepts, config)
    if readings is None:
        readings = readings_of(concepts)
    focused = focus_mentions([(m.start, m.end) for m in readings], focus)
    expanded = expansions(concepts)
    scored: list[tuple[float, str]] = []
    relevances: dict[str, Relevance] = {}
    cut, best_cut = 0, 0.0

    def relevance_of(d: str) -> Relevance:
        rel = relevances.get(d)
        if rel is None:
            rel = relevances[d] = relevance(readings, focused, expanded, scores, d, config.focus_boost)
        return rel

    # a relevance is in [0, 1]: with no minimum nothing is cut, and only the documents shown
    # need theirs (at 10,000 documents the relevance of every scored one was ~18 % of ask);
    # and only the head of the ordered documents is read
    room = k + len(exclude_ids)
    if min_relevance > 0:
        for s, d in scores.ordered(first=len(scores.postings)):
            if (rel := relevance_of(d)).value < min_relevance:
                cut, best_cut = cut + 1, max(best_cut, rel.value)
                continue
            scored.append((s, d))
    else:
        for s, d in scores.ordered(first=room):
            if len(scored) >= room:
                break
            scored.append((s, d))
    texts = {}
    want = [d for _, d in scored[:room]]
    scores.prefetch(want)
    if want:
        for r in store.select("select-document-texts", values=Values.column("doc", [NamedNode(d) for d in want])):
            texts[r["doc"].value] = r
    spans = _spans(store, [(d, c) for d in want for c in scores.postings[d]])
    labels = concept_labels(store, [c for d in want for c in scores.postings[d]], lang)
    results: list[Result] = []
    for s, d in scored:
        if len(results) >= k:
            break
        info = texts.get(d)
        if info is None:
            continue
        doc_id = info["id"].value
        if doc_id in exclude_ids:
            continue
        located = {c: spans.get((d, c), []) for c in scores.postings[d]}
        results.append(replace(_result(d, s, info, located, weight, labels, config.focus_boost,
                                       scores.contributions(d)), relevance=relevance_of(d).value))
    return Ranked(results, cut, best_cut)


def _spans(store: Store, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[int, int, int, int]]]:
    """(document, concept) → (start, end, passage start, passage end) of each annotation of the
    document with the concept among its candidates, in document order."""
    if not pairs:
        return {}
    fast = posting_index.spans(store, pairs)
    if fast is not None:
        return fast
    out: dict[tuple[str, str], dict[str, tuple[int, int, int, int]]] = defaultdict(dict)
    if pairs:
        rows = store.select("select-document-concept-spans", values=Values(
            ("doc", "concept"), [(NamedNode(d), NamedNode(c)) for d, c in dict.fromkeys(pairs)]))
        for r in rows:
            out[(r["doc"].value, r["concept"].value)][r["ann"].value] = (
                int(r["start"].value), int(r["end"].value), int(r["pstart"].value), int(r["pend"].value))
    return {key: sorted(v.values()) for key, v in out.items()}


def _result(doc: str, score: float, info: Mapping[str, object],
            per_concept: Mapping[str, list[tuple[int, int, int, int]]],
            weight: Mapping[str, QueryConcept], labels: Mapping[str, str], boost: float,
            contributions: tuple[Contribution, ...]) -> Result:
    # the passage with the most matched weight
    by_passage: dict[tuple[int, int], float] = defaultdict(float)
    for c, spans in per_concept.items():
        for _, _, ps, pe in spans:
            by_passage[(ps, pe)] += weight[c].weight * (boost if weight[c].focus else 1.0)
    ps, pe = max(by_passage, key=lambda p: (by_passage[p], -p[0]))
    text = info["text"].value  # type: ignore[attr-defined]
    highlights = sorted({(a - ps, b - ps) for spans in per_concept.values()
                         for a, b, s0, _ in spans if s0 == ps})
    concepts = tuple(sorted(
        (MatchedConcept(c, labels.get(c, c.rsplit("/", 1)[-1]), weight[c].weight) for c in per_concept),
        key=lambda m: (-m.weight, m.iri)))
    decisions = tuple(sorted({d for c in per_concept if (d := weight[c].decision) is not None}))
    title = info["title"].value if "title" in info else ""  # type: ignore[attr-defined]
    return Result(
        doc_id=info["id"].value, doc_iri=doc, score=round(score, 6),  # type: ignore[attr-defined]
        lang=info["lang"].value, title=title, passage=text[ps:pe], passage_start=ps,  # type: ignore[attr-defined]
        highlights=tuple(highlights), concepts=concepts, decisions=decisions,
        contributions=contributions,
    )
