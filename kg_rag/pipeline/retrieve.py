"""Rank documents by concepts: the question's senses, SKOS/WordNet expansion at lower weight,
concept rarity (idf) — language-independent, because documents meet the question on concepts,
not words.

Both sides carry their uncertainty (:func:`reading_weights`): a *confident* decision (confidence
≥ ``CONFIDENT``) counts only for the concept it chose — its rejected readings retrieve nothing —
while an unsure one counts for each reading by how likely it is. Label matching (``wsd="none"``)
counts every candidate alike.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from kg_rag.derived import Derived, Table
from kg_rag.model import MatchedConcept, Result
from kg_rag.store import Store, Values
from kg_rag.text.normalise import base_language

#: weight of an expansion relative to the concept it expands; SKOS mapping relations link
#: concepts of different schemes (a thesaurus to WordNet, one thesaurus to another)
EXPANSION = {"broader": 0.5, "narrower": 0.5, "hypernym": 0.5, "hyponym": 0.5,
             "instance_hypernym": 0.5, "instance_hyponym": 0.5,
             "related": 0.3, "similar": 0.3, "also": 0.3,
             "exactMatch": 1.0, "closeMatch": 0.8,
             "broadMatch": 0.5, "narrowMatch": 0.5, "relatedMatch": 0.3}
#: mappings to the same meaning in another scheme: the neighbour stands in for its concept,
#: focus included (other expansions are never the focus)
SAME_MEANING = frozenset({"exactMatch", "closeMatch"})
#: the focus word ranks documents first; the rest of the question breaks ties (en-sense-dev
#: nDCG@10, label matching / knowledge: ×10 0.725 / 0.73, ×100 0.751 / 0.766; README "Retrieval")
FOCUS_BOOST = 100.0
#: a decision at least this confident counts only for the reading it chose
CONFIDENT = 0.5
#: a document's unsure decision counts for a reading by (p(reading) / p(chosen)) ** this
DOC_SOFTNESS = 0.5


@dataclass(frozen=True, slots=True)
class QueryConcept:
    iri: str
    weight: float
    focus: bool = False
    decision: str | None = None


def expand(store: Store, concepts: Iterable[QueryConcept],
           weights: Mapping[str, float] = EXPANSION) -> list[QueryConcept]:
    """Add neighbours of the concepts at ``weights`` × their weight (max over paths)."""
    base = {c.iri: c for c in concepts}
    if not base or not any(weights.values()):
        return list(base.values())
    rows = store.select("select-concept-neighbours",
                        values=Values.column("concept", [NamedNode(i) for i in base]))
    best: dict[str, QueryConcept] = dict(base)
    for r in rows:
        src = base[r["concept"].value]
        rel = r["rel"].value.rsplit("#", 1)[-1]
        w = weights.get(rel, 0.0) * src.weight
        n = r["neighbour"].value
        focus = src.focus and rel in SAME_MEANING
        if w <= 0:
            continue
        cur = best.get(n)
        if cur is None or (cur.iri not in base and (cur.weight, cur.focus) < (w, focus)):
            best[n] = QueryConcept(n, w, focus, src.decision)
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


#: how documents meet the query concepts
MATCH_MODES = ("candidate", "body", "agreement")


def reading_weights(scores: Mapping[str, float], chosen: str | None, confidence: float,
                    document: bool) -> dict[str, float]:
    """How much a decision counts for each concept it considered.

    ``scores``: the decision's probability of each candidate concept. A confident decision
    (``confidence >= CONFIDENT``) or one without scores counts 1 for its chosen concept and 0 for
    the others. An unsure one counts for every reading: on the question side by its probability
    (the weights of a mention sum to 1, as label matching's 1/n do), on a document's side by
    ``(p / p_chosen) ** DOC_SOFTNESS`` (the chosen reading 1, a near-tie almost 1).
    """
    if chosen is None:
        return {}
    total = sum(scores.values())
    if confidence >= CONFIDENT or total <= 0 or len(scores) < 2:
        return {chosen: 1.0}
    if not document:
        return {c: p / total for c, p in scores.items() if p > 0}
    top = max(scores.get(chosen, 0.0), max(scores.values()))
    return {c: (p / top) ** DOC_SOFTNESS for c, p in scores.items() if p > 0}


def question_weights(concepts: Sequence[str], scores: Mapping[str, float] | None,
                     chosen: str | None = None, confidence: float = 0.0) -> dict[str, float]:
    """What one mention of a question looks for. Without a decision (``scores`` None: label
    matching, or an unambiguous mention) every candidate alike, 1/n; else the decision's readings
    (:func:`reading_weights`, question side)."""
    if scores is None:
        return {c: 1.0 / len(concepts) for c in concepts}
    return reading_weights(scores, chosen, confidence, document=False)


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


def _decision_weights(store: Store, decisions: set[str]) -> dict[str, dict[str, float]]:
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
    return {d: reading_weights(dict(x.scores), x.chosen, x.confidence, document=True)
            for d, x in known.items()}


def rank(store: Store, concepts: list[QueryConcept], k: int, lang: str, match: str = "agreement",
         exclude_ids: frozenset[str] = frozenset()) -> list[Result]:
    """The top ``k`` documents for weighted query concepts.

    ``match``: ``candidate`` — a document annotation counts for every concept among its
    candidates (label matching); ``body`` — only for the concept its decision chose;
    ``agreement`` (default) — for each candidate concept with the weight the document's own
    decision gives it (:func:`reading_weights`). An unambiguous annotation weighs 1.
    """
    if match not in MATCH_MODES:
        raise ValueError(f"match must be one of {MATCH_MODES}")
    if not concepts or k <= 0:
        return []
    weight = {c.iri: c for c in concepts}
    query = "select-documents-by-body" if match == "body" else "select-documents-by-candidate"
    rows = store.select(query, values=Values.column("concept", [NamedNode(c) for c in weight]))
    n_rows = store.select("select-document-count")
    total = int(n_rows[0]["n"].value) if n_rows else 0
    dec_weights = (_decision_weights(store, {r["dec"].value for r in rows if "dec" in r})
                   if match == "agreement" else {})
    df: dict[str, set[str]] = defaultdict(set)
    hits: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))  # doc → concept → annotations
    tfw: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        c, d, ann = r["concept"].value, r["doc"].value, r["ann"].value
        w = 1.0
        if match == "agreement" and "dec" in r:
            w = dec_weights.get(r["dec"].value, {}).get(c, 0.0)
        df[c].add(d)
        tfw[d][c][ann] = max(tfw[d][c].get(ann, 0.0), w)
        if w > 0:
            hits[d][c].append(ann)
    scored: list[tuple[float, str]] = []
    for d, per_concept in hits.items():
        s = 0.0
        for c in per_concept:
            qc = weight[c]
            idf = math.log(1.0 + total / max(1, len(df[c])))
            tf = sum(tfw[d][c].values())
            s += qc.weight * (FOCUS_BOOST if qc.focus else 1.0) * idf * (tf if tf <= 1 else 1.0 + math.log(tf))
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
        results.append(_result(d, s, info, located, weight, labels))
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
            weight: Mapping[str, QueryConcept], labels: Mapping[str, str]) -> Result:
    # the passage with the most matched weight
    by_passage: dict[tuple[int, int], float] = defaultdict(float)
    for c, spans in per_concept.items():
        for _, _, ps, pe in spans:
            by_passage[(ps, pe)] += weight[c].weight * (FOCUS_BOOST if weight[c].focus else 1.0)
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
    )
