"""Rank documents by concepts: the question's senses, SKOS/WordNet expansion at lower weight,
concept rarity (idf) — language-independent, because documents meet the question on concepts,
not words.

Both sides carry their uncertainty (:func:`reading_weights`): a *confident* decision (confidence
≥ ``confident``) counts only for the concept it chose — its rejected readings retrieve nothing —
while an unsure one counts for each reading by how likely it is. Label matching (``wsd="none"``)
counts every candidate alike.

Every parameter is a field of one :class:`~kg_rag.pipeline.ranking_config.RetrievalConfig`;
:func:`score` is the one arithmetic, and returns each result's contributions, which ``rank``
sums and ``explain --document`` replays (:mod:`kg_rag.explain.result`).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from kg_rag.derived import Derived, Table
from kg_rag.model import Contribution, MatchedConcept, Mention, Result, Selection
from kg_rag.pipeline.ranking_config import DEFAULT, RetrievalConfig
from kg_rag.store import Store, Values
from kg_rag.text.normalise import base_language


@dataclass(frozen=True, slots=True)
class QueryConcept:
    """A concept the ranking looks for, at ``weight``. An expansion keeps where it came from:
    the question concept it expands (``source``), the relation (its IRI) and that relation's
    weight, so ``weight`` = ``expansion_weight`` × ``source.weight``."""

    iri: str
    weight: float
    focus: bool = False
    decision: str | None = None
    mention: int | None = None              # the question mention whose reading set the weight
    source: QueryConcept | None = None
    relation: str | None = None
    expansion_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class QuestionReading:
    """What one mention of a question looks for: concept → weight (:func:`question_weights`)."""

    start: int
    end: int
    weights: Mapping[str, float]
    decision: str | None = None


def mention_reading(mention: Mention, selection: Selection | None, decision: str | None,
                    label_matching: bool, config: RetrievalConfig = DEFAULT) -> QuestionReading:
    """What one mention of a question looks for: every candidate alike (1/n) for label matching
    or an unambiguous mention; nothing for an ambiguous one left undecided; else its decision's
    readings (:func:`question_weights`, scores summed per concept over its senses)."""
    if label_matching or not mention.ambiguous:
        weights = question_weights(mention.concepts, None)
    elif selection is None or selection.chosen is None:
        weights = {}
    else:
        by_id = dict(selection.scores)
        scores: dict[str, float] = {}
        for cand in mention.candidates:
            scores[cand.concept] = scores.get(cand.concept, 0.0) + by_id.get(cand.id, 0.0)
        weights = question_weights(mention.concepts, scores, selection.chosen.concept,
                                   selection.confidence, config)
    return QuestionReading(mention.start, mention.end, weights, decision)


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
        for c in sorted(m.weights):
            w = m.weights[c]
            prev = concepts.get(c)
            if prev is None or prev.weight < w or (is_focus and not prev.focus):
                concepts[c] = QueryConcept(c, w, is_focus or (prev.focus if prev else False),
                                           m.decision, i)
    return list(concepts.values())


def expand(store: Store, concepts: Iterable[QueryConcept],
           config: RetrievalConfig = DEFAULT) -> list[QueryConcept]:
    """Add neighbours of the concepts at the config's expansion weight × their weight (max over
    paths); a mapping to the same meaning (``config.same_meaning``) keeps the focus."""
    base = {c.iri: c for c in concepts}
    weights = config.weights
    if not base or not any(weights.values()):
        return list(base.values())
    rows = store.select("select-concept-neighbours",
                        values=Values.column("concept", [NamedNode(i) for i in base]))
    best: dict[str, QueryConcept] = dict(base)
    for r in rows:
        src = base[r["concept"].value]
        rel_iri = r["rel"].value
        rel = rel_iri.rsplit("#", 1)[-1]
        factor = weights.get(rel, 0.0)
        w = factor * src.weight
        n = r["neighbour"].value
        focus = src.focus and rel in config.same_meaning
        if w <= 0:
            continue
        cur = best.get(n)
        if cur is None or (cur.iri not in base and (cur.weight, cur.focus) < (w, focus)):
            best[n] = QueryConcept(n, w, focus, src.decision, src.mention, src, rel_iri, factor)
    return list(best.values())


def concept_labels(store: Store, iris: Iterable[str], lang: str) -> dict[str, str]:
    """A display label per concept, preferring ``lang``, then English, then any."""
    iris = list(dict.fromkeys(iris))
    if not iris:
        return {}
    rows = store.select("select-concept-labels", values=Values.column("concept", [NamedNode(i) for i in iris]))
    rank_kind = {"pref": 0, "alt": 1, "lemma": 2}
    best: dict[str, tuple[tuple[int, int, str], str]] = {}
    for r in rows:
        lit = r["label"]
        tag = base_language(getattr(lit, "language", None))
        lang_rank = 0 if tag == lang else 1 if tag == "en" else 2
        key = (lang_rank, rank_kind.get(r["kind"].value, 3), lit.value)
        c = r["concept"].value
        if c not in best or key < best[c][0]:
            best[c] = (key, lit.value)
    return {c: v[1] for c, v in best.items()}


def reading_weights(scores: Mapping[str, float], chosen: str | None, confidence: float,
                    document: bool, config: RetrievalConfig = DEFAULT) -> dict[str, float]:
    """How much a decision counts for each concept it considered.

    ``scores``: the decision's probability of each candidate concept. A confident decision
    (``confidence >= config.confident``) or one without scores counts 1 for its chosen concept
    and 0 for the others. An unsure one counts for every reading: on the question side by its
    probability (the weights of a mention sum to 1, as label matching's 1/n do), on a document's
    side by ``(p / p_chosen) ** config.doc_softness`` (the chosen reading 1, a near-tie almost 1).
    """
    if chosen is None:
        return {}
    total = sum(scores.values())
    if confidence >= config.confident or total <= 0 or len(scores) < 2:
        return {chosen: 1.0}
    if not document:
        return {c: p / total for c, p in scores.items() if p > 0}
    top = max(scores.get(chosen, 0.0), max(scores.values()))
    return {c: (p / top) ** config.doc_softness for c, p in scores.items() if p > 0}


def question_weights(concepts: Sequence[str], scores: Mapping[str, float] | None,
                     chosen: str | None = None, confidence: float = 0.0,
                     config: RetrievalConfig = DEFAULT) -> dict[str, float]:
    """What one mention of a question looks for. Without a decision (``scores`` None: label
    matching, or an unambiguous mention) every candidate alike, 1/n; else the decision's readings
    (:func:`reading_weights`, question side)."""
    if scores is None:
        return {c: 1.0 / len(concepts) for c in concepts}
    return reading_weights(scores, chosen, confidence, False, config)


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
class _Decision:
    scores: tuple[tuple[str, float], ...]   # concept → probability (summed over its senses)
    chosen: str | None
    confidence: float


#: decisions never change under their IRI (a hash of selector, mention, candidates and context)
DECISIONS: Table[str, _Decision] = Table("decision-scores", 50_000)


def _decision_weights(store: Store, decisions: set[str],
                      config: RetrievalConfig) -> dict[str, dict[str, float]]:
    """decision IRI → concept → how much a document annotation decided by it counts for the
    concept (:func:`reading_weights`, document side)."""
    cache = Derived.of(store).table(DECISIONS)
    known, todo = cache.split(decisions)
    missing = [NamedNode(d) for d in todo]
    if missing:
        scores: dict[str, dict[str, float]] = defaultdict(dict)
        chosen: dict[str, str | None] = {}
        confidence: dict[str, float] = {}
        for r in store.select("select-decision-scores", values=Values.column("decision", missing)):
            d, c = r["decision"].value, sys.intern(r["candConcept"].value)  # one row per candidate sense
            scores[d][c] = scores[d].get(c, 0.0) + float(r["score"].value)
            chosen[d] = sys.intern(r["chosenConcept"].value) if "chosenConcept" in r else None
            confidence[d] = float(r["confidence"].value)
        for d in scores:
            known[d] = _Decision(tuple(scores[d].items()), chosen[d], confidence[d])
            cache.put(d, known[d])
    return {d: reading_weights(dict(x.scores), x.chosen, x.confidence, True, config)
            for d, x in known.items()}


@dataclass(frozen=True, slots=True)
class Scores:
    """The ranking arithmetic's working, per document IRI (dicts in the order of the store's rows)."""

    #: the query concepts by IRI
    concepts: dict[str, QueryConcept]
    #: what each matched concept added: (concept, focus factor, idf, document weight, counted)
    terms: dict[str, list[tuple[str, float, float, float, float]]]
    #: concept → annotation → how much it counted (0: its decision chose another reading)
    readings: dict[str, dict[str, dict[str, float]]]
    #: concept → the annotations that counted
    hits: dict[str, dict[str, list[str]]]

    def score(self, doc: str) -> float:
        """The sum of the document's contributions (in their order)."""
        s = 0.0
        for term in self.terms.get(doc, ()):
            s += term[4]
        return s

    def contributions(self, doc: str) -> tuple[Contribution, ...]:
        out = []
        for c, focus, idf, doc_w, counted in self.terms.get(doc, ()):
            qc = self.concepts[c]
            src = qc.source or qc
            out.append(Contribution(src.iri, c, qc.relation, src.weight, qc.expansion_weight, focus, idf,
                                    doc_w, len(self.readings[doc][c]), counted))
        return tuple(out)


def score(store: Store, concepts: Sequence[QueryConcept], config: RetrievalConfig = DEFAULT) -> Scores:
    """Every document meeting the query concepts, with what each concept added to its score:
    ``weight`` (question weight × expansion weight) × focus boost × rarity (idf) × the document's
    readings of the concept (summed over its annotations, ``1 + ln`` above 1)."""
    weight = {c.iri: c for c in concepts}
    rows = store.select("select-documents-by-candidate",
                        values=Values.column("concept", [NamedNode(c) for c in weight]))
    n_rows = store.select("select-document-count")
    total = int(n_rows[0]["n"].value) if n_rows else 0
    agreement = config.match == "agreement"
    dec_weights = (_decision_weights(store, {r["dec"].value for r in rows if "dec" in r}, config)
                   if agreement else {})
    df: dict[str, set[str]] = defaultdict(set)
    hits: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # doc → concept → annotations
    tfw: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        c, d, ann = r["concept"].value, r["doc"].value, r["ann"].value
        w = 1.0
        if agreement and "dec" in r:
            w = dec_weights.get(r["dec"].value, {}).get(c, 0.0)
        df[c].add(d)
        tfw[d][c][ann] = max(tfw[d][c].get(ann, 0.0), w)
        if w > 0:
            hits[d][c].append(ann)
    terms: dict[str, list[tuple[str, float, float, float, float]]] = {}
    for d, per_concept in hits.items():
        out = terms[d] = []
        for c in per_concept:
            qc = weight[c]
            idf = math.log(1.0 + total / max(1, len(df[c])))
            tf = sum(tfw[d][c].values())
            focus = config.focus_boost if qc.focus else 1.0
            doc_w = tf if tf <= 1 else 1.0 + math.log(tf)
            out.append((c, focus, idf, doc_w, qc.weight * focus * idf * doc_w))
    return Scores(weight, terms, {d: dict(v) for d, v in tfw.items()},
                  {d: dict(v) for d, v in hits.items()})


def rank(store: Store, concepts: list[QueryConcept], k: int, lang: str,
         config: RetrievalConfig = DEFAULT, exclude_ids: frozenset[str] = frozenset()) -> list[Result]:
    """The top ``k`` documents for weighted query concepts (:func:`score`), each with the
    contributions its score sums. ``config.match``: ``candidate`` — a document annotation counts
    for every concept among its candidates (label matching); ``agreement`` — for each candidate
    concept with the weight the document's own decision gives it (:func:`reading_weights`). An
    unambiguous annotation weighs 1."""
    if not concepts or k <= 0:
        return []
    weight = {c.iri: c for c in concepts}
    scores = score(store, concepts, config)
    hits = scores.hits
    scored: list[tuple[float, str]] = []
    for d in hits:
        s = scores.score(d)
        if s > 0:
            scored.append((s, d))
    scored.sort(key=lambda x: (-x[0], x[1]))
    texts = {}
    want = [d for _, d in scored[: k + len(exclude_ids)]]
    if want:
        for r in store.select("select-document-texts", values=Values.column("doc", [NamedNode(d) for d in want])):
            texts[r["doc"].value] = r
    spans = _spans(store, [a for d in want for anns in hits[d].values() for a in anns])
    labels = concept_labels(store, [c for d in want for c in hits[d]], lang)
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
        located = {c: [spans[a] for a in anns if a in spans] for c, anns in hits[d].items()}
        results.append(_result(d, s, info, located, weight, labels, config.focus_boost,
                               scores.contributions(d)))
    return results


def _spans(store: Store, anns: list[str]) -> dict[str, tuple[int, int, int, int]]:
    """annotation IRI → (start, end, passage start, passage end)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    anns = list(dict.fromkeys(anns))
    if anns:
        rows = store.select("select-annotation-spans", values=Values.column("ann", [NamedNode(a) for a in anns]))
        for r in rows:
            out[r["ann"].value] = (int(r["start"].value), int(r["end"].value),
                                   int(r["pstart"].value), int(r["pend"].value))
    return out


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
