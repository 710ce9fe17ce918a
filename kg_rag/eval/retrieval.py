"""``kg-rag eval retrieval``: BEIR-layout retrieval evaluation of label matching vs sense selection.

The corpus is indexed into the store (its own document graphs, removed afterwards with the
questions the run recorded, unless ``keep``); every query is asked in its language, with its ``metadata.start/end`` as the focus when
present. A query never ranks the corpus documents :func:`excluded_ids` names — its own ``_id``
(BEIR ignore-identical-ids) and, for a query ``<lang>.<id>``, its aligned translation ``<id>`` —
in every mode alike (BM25 too). Every mode is also reported per query language (``metadata.lang``),
each slice with its own paired comparison against ``none``, and the gain of each mode over
``none`` per source document of the queries (:func:`document_of`: a gain that one document carries
is not a gain of the method). Other metadata (gold senses, lemmas) is never read.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument
from kg_rag.errors import InputError, KgRagError
from kg_rag.senses.mode import WsdMode
from kg_rag.text.normalise import nfc

if TYPE_CHECKING:
    from kg_rag.eval.significance import Paired

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BeirQuery:
    id: str
    text: str
    lang: str | None
    focus: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class BeirSet:
    corpus: tuple[SourceDocument, ...]
    queries: tuple[BeirQuery, ...]
    qrels: dict[str, dict[str, int]]
    problems: tuple[str, ...] = ()


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InputError(f"{path}: missing (a BEIR folder has corpus.jsonl, queries.jsonl, qrels/test.tsv)")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{n}: not valid JSON ({e.msg})") from None
    return out


def read_beir(folder: str | Path, default_lang: str | None = None) -> BeirSet:
    d = Path(folder)
    problems: list[str] = []
    corpus = []
    for n, rec in _jsonl(d / "corpus.jsonl"):
        if "_id" not in rec or not isinstance(rec.get("text"), str):
            raise InputError(f"{d / 'corpus.jsonl'}:{n}: needs \"_id\" and \"text\"")
        lang = (rec.get("metadata") or {}).get("lang") or default_lang
        if lang is None:
            problems.append(f"corpus {rec['_id']}: no lang, detected")
        text = nfc(rec["text"])
        title = nfc(rec.get("title") or "")
        corpus.append(SourceDocument(str(rec["_id"]), text, lang, title, "beir"))
    queries = []
    for n, rec in _jsonl(d / "queries.jsonl"):
        if "_id" not in rec or not isinstance(rec.get("text"), str):
            raise InputError(f"{d / 'queries.jsonl'}:{n}: needs \"_id\" and \"text\"")
        meta = rec.get("metadata") or {}
        focus = None
        if isinstance(meta.get("start"), int) and isinstance(meta.get("end"), int):
            focus = (meta["start"], meta["end"])
        queries.append(BeirQuery(str(rec["_id"]), nfc(rec["text"]), meta.get("lang") or default_lang, focus))
    if not queries:
        raise InputError(f"{d / 'queries.jsonl'}: no queries")
    if not corpus:
        raise InputError(f"{d / 'corpus.jsonl'}: no documents")
    qrels: dict[str, dict[str, int]] = {}
    qfile = d / "qrels" / "test.tsv"
    if not qfile.is_file():
        raise InputError(f"{qfile}: missing")
    for n, line in enumerate(qfile.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.strip().split("\t")
        if not parts or parts[0] in ("", "query-id"):
            continue
        if len(parts) < 3:
            raise InputError(f"{qfile}:{n}: expected query-id, corpus-id, score")
        try:
            qrels.setdefault(parts[0], {})[parts[1]] = int(float(parts[2]))
        except ValueError:
            raise InputError(f"{qfile}:{n}: score {parts[2]!r} is not a number") from None
    qids = {q.id for q in queries}
    unknown = set(qrels) - qids
    if unknown:
        problems.append(f"{len(unknown)} qrels name unknown queries (ignored)")
    return BeirSet(tuple(corpus), tuple(queries), qrels, tuple(problems))


#: how :func:`excluded_ids` chooses, in the words of the report, the README and ``--help``
EXCLUSION_RULE = ("a query never ranks the corpus document with its own _id, nor, when its _id is "
                  "<lang>.<rest> with <lang> its metadata.lang, the corpus document <rest> or else the "
                  "longest dot-separated prefix of <rest> that is a corpus _id (its aligned translation: "
                  "es.d001.s005 and es.d001.s005.t003 leave out d001.s005)")


def excluded_ids(query: BeirQuery, corpus_ids: Collection[str]) -> frozenset[str]:
    """The corpus ids ``query`` never ranks (:data:`EXCLUSION_RULE`): its own id and its aligned
    translation, the id without the ``<lang>.`` prefix of its own language (or, for a query id with
    a further part such as a target number, the longest dot-separated prefix that is a corpus id)."""
    out = {query.id}
    prefix = f"{query.lang}." if query.lang else None
    if prefix and query.id.startswith(prefix):
        parts = query.id[len(prefix):].split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in corpus_ids:
                out.add(candidate)
                break
    return frozenset(out)


# --- metrics ------------------------------------------------------------------------------
def ndcg_at(ranked: Sequence[str], rel: dict[str, int], k: int) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def precision_at(ranked: Sequence[str], rel: dict[str, int], k: int) -> float:
    return sum(1 for d in ranked[:k] if rel.get(d, 0) > 0) / k


def mrr_at(ranked: Sequence[str], rel: dict[str, int], k: int) -> float:
    for i, d in enumerate(ranked[:k]):
        if rel.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def recall_at(ranked: Sequence[str], rel: dict[str, int], k: int) -> float:
    n = sum(1 for g in rel.values() if g > 0)
    return sum(1 for d in ranked[:k] if rel.get(d, 0) > 0) / n if n else 0.0


def per_query(run: dict[str, list[str]], qrels: dict[str, dict[str, int]],
              k: int = 10) -> dict[str, dict[str, float]]:
    """Each metric per judged query (a query with at least one relevant document)."""
    out: dict[str, dict[str, float]] = {}
    for q, ranked in run.items():
        rel = qrels.get(q, {})
        if not any(g > 0 for g in rel.values()):
            continue
        out[q] = dict(zip(metric_names(k), (ndcg_at(ranked, rel, k), precision_at(ranked, rel, 1),
                                            precision_at(ranked, rel, 5), mrr_at(ranked, rel, k),
                                            recall_at(ranked, rel, k)), strict=True))
    return out


def score_run(run: dict[str, list[str]], qrels: dict[str, dict[str, int]], k: int = 10) -> dict[str, float]:
    """The mean of each metric over the judged queries, and how many there were."""
    return mean_scores(per_query(run, qrels, k), k)


def mean_scores(values: dict[str, dict[str, float]], k: int = 10) -> dict[str, float]:
    """:func:`per_query`'s values averaged, with the number of judged queries."""
    out: dict[str, float] = {m: round(sum(v[m] for v in values.values()) / len(values), 4) if values else 0.0
                             for m in metric_names(k)}
    out["judged"] = len(values)
    return out


def bm25_run(data: BeirSet, k: int, exclude: Mapping[str, frozenset[str]]) -> dict[str, list[str]]:
    """BM25 (bm25s) of each query's text over the corpus, without the ids ``exclude`` names for it."""
    try:
        import bm25s
    except ImportError as e:  # pragma: no cover - eval extra
        raise KgRagError("the BM25 reference row needs bm25s: install the 'eval' extra from the kg-rag source folder with pip install '.[eval]'") from e
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets itself to DEBUG on import
    ids = [d.id for d in data.corpus]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([d.text for d in data.corpus], show_progress=False), show_progress=False)
    run: dict[str, list[str]] = {}
    n = len(ids)
    for q in data.queries:
        toks = bm25s.tokenize([q.text], show_progress=False)
        skip = exclude.get(q.id, frozenset({q.id}))
        docs, _ = retriever.retrieve(toks, k=min(n, k + len(skip)), show_progress=False)
        run[q.id] = [ids[i] for i in docs[0] if ids[i] not in skip][:k]
    return run


def metric_names(k: int) -> tuple[str, ...]:
    """The report's metrics at cut-off ``k`` (P@1 and P@5 whatever ``k``)."""
    return (f"ndcg@{k}", "p@1", "p@5", f"mrr@{k}", f"recall@{k}")


def compared_names(k: int) -> tuple[str, ...]:
    """The metrics each mode is compared on against label matching (``none``), query by query."""
    return (f"ndcg@{k}", "p@1")


def compare_to_none(values: Mapping[str, Mapping[str, Mapping[str, float]]],
                    k: int) -> dict[str, dict[str, Paired]]:
    """Every mode but ``none`` against ``none`` on :func:`compared_names`, query by query (the
    queries both judged); empty without a ``none`` run."""
    from kg_rag.eval.significance import paired  # numpy: not on the CLI's import path

    base = values.get("none")
    if base is None:
        return {}
    return {mode: {m: paired({q: x[m] for q, x in v.items()}, {q: x[m] for q, x in base.items()})
                   for m in compared_names(k)}
            for mode, v in values.items() if mode != "none"}


def document_of(query_id: str, lang: str | None) -> str | None:
    """The source document of a query whose id is a sentence id in the unified WSD corpora's
    style, ``[<lang>.][<corpus>.]<document>.s<n>[.t<n>]``: the parts before the first ``s<n>``,
    less a leading ``<lang>.`` (``es.d001.s002.t008`` → ``d001``, ``semeval2007.d000.s000`` →
    ``semeval2007.d000``); None for another id."""
    parts = query_id.split(".")
    for i in range(1, len(parts)):
        p = parts[i]
        if len(p) > 1 and p[0] == "s" and p[1:].isdigit():
            head = parts[1:i] if lang and parts[0] == lang else parts[:i]
            return ".".join(head) or None
    return None


@dataclass(frozen=True, slots=True)
class Slice:
    """The queries of one language (``metadata.lang``; ``und`` without one) or of one source
    document (:func:`document_of`): every mode's means over them and its paired comparison
    against ``none`` on them alone."""

    name: str
    queries: int
    modes: dict[str, dict[str, float]]
    vs_none: dict[str, dict[str, Paired]]
    failures: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "modes": self.modes, "failures": self.failures,
                "vs_none": {mode: {m: c.as_dict() for m, c in cmp.items()} for mode, cmp in self.vs_none.items()}}


def _mode_rows(modes: Mapping[str, Mapping[str, float]], failures: Mapping[str, int], k: int) -> list[str]:
    lines = ["| mode | " + " | ".join(metric_names(k)) + " | no concept |",
             "|---|" + "---:|" * (len(metric_names(k)) + 1)]
    for mode, m in modes.items():
        cells = " | ".join(f"{m.get(name, 0.0):.3f}" for name in metric_names(k))
        lines.append(f"| {mode} | {cells} | {failures.get(mode, '-')} |")
    return lines


def _comparisons(vs_none: Mapping[str, Mapping[str, Paired]], where: str = "") -> list[str]:
    return [f"- {mode} vs none{where}: " + "; ".join(f"{m} {c.describe()}" for m, c in cmp.items())
            for mode, cmp in vs_none.items()]


@dataclass(slots=True)
class RetrievalReport:
    queries: int
    k: int = 10
    modes: dict[str, dict[str, float]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    llm: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: mode → metric → its gain over ``none`` (per-query wins/losses, randomization-test p)
    vs_none: dict[str, dict[str, Paired]] = field(default_factory=dict)
    #: queries whose aligned translation :func:`excluded_ids` left out (beside their own id)
    aligned: int = 0
    #: query language → the same figures over its queries alone
    by_lang: dict[str, Slice] = field(default_factory=dict)
    #: source document of the queries (:func:`document_of`) → the same; empty unless every
    #: query has one and there are two or more
    by_document: dict[str, Slice] = field(default_factory=dict)
    #: mode → query id → the corpus ids it ranked, best first (not in :meth:`as_dict`)
    runs: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)
    #: mode → judged query id → metric → its value (:func:`per_query`; not in :meth:`as_dict`)
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "modes": self.modes, "failures": self.failures,
                "llm": self.llm, "seconds": self.seconds, "problems": self.problems,
                "vs_none": {mode: {m: c.as_dict() for m, c in cmp.items()}
                            for mode, cmp in self.vs_none.items()},
                "excluded": {"rule": EXCLUSION_RULE, "aligned": self.aligned},
                "by_lang": {lang: s.as_dict() for lang, s in self.by_lang.items()},
                "by_document": {d: s.as_dict() for d, s in self.by_document.items()}}

    def table(self) -> str:
        """The report as Markdown: one row per mode, then (a list) LLM usage, the comparisons
        against ``none`` and what was left out; with queries in two or more languages the same per
        language under a ``###`` heading each; notes last."""
        lines = [f"{self.queries} queries; corpus indexed in {self.seconds.get('index', 0):.1f} s", "",
                 *_mode_rows(self.modes, self.failures, self.k), ""]
        for mode, llm in self.llm.items():
            lines.append(f"- {mode}: {llm['calls']} LLM calls, {llm['tokens_in']} tokens in, "
                         f"{llm['tokens_out']} out")
        lines += _comparisons(self.vs_none)
        if self.aligned:
            lines.append(f"- left out of the ranking: each query's own id and, for {self.aligned} queries, "
                         "the aligned translation (query <lang>.<id> → corpus <id>)")
        if len(self.by_lang) > 1:
            for lang, s in self.by_lang.items():
                lines += ["", f"### {lang} ({s.queries} queries)", "", *_mode_rows(s.modes, s.failures, self.k), ""]
                lines += _comparisons(s.vs_none, f" ({lang})")
        if self.by_document:
            lines += ["", f"### by source document: ndcg@{self.k}, each mode − none", "",
                      *_document_rows(self.by_document, self.k), ""]
        lines += [f"- note: {p}" for p in self.problems]
        return "\n".join(lines).rstrip("\n")


def _document_rows(slices: Mapping[str, Slice], k: int) -> list[str]:
    """One row per document: its queries, ``none``'s nDCG@k and each other mode's paired gain."""
    metric = f"ndcg@{k}"
    modes = [m for m in dict.fromkeys(m for s in slices.values() for m in s.vs_none) if m != "bm25"]
    lines = ["| document | queries | none | " + " | ".join(f"{m} − none" for m in modes) + " |",
             "|---|---:|---:|" + "---|" * len(modes)]
    for name, s in slices.items():
        cells = []
        for m in modes:
            c = s.vs_none.get(m, {}).get(metric)
            cells.append("-" if c is None else f"{c.delta:+.3f} [{c.low:+.3f}, {c.high:+.3f}] "
                                               f"({c.wins}/{c.losses}, p = {c.p:.2g})")
        lines.append(f"| {name} | {s.queries} | {s.modes.get('none', {}).get(metric, 0.0):.3f} | "
                     + " | ".join(cells) + " |")
    return lines


def _slices(values: Mapping[str, dict[str, dict[str, float]]], group: Mapping[str, str],
            failed: Mapping[str, set[str]], k: int) -> dict[str, Slice]:
    """The queries grouped by ``group`` (query id → slice name), each group's :class:`Slice`."""
    out: dict[str, Slice] = {}
    for name in sorted(set(group.values())):
        mine = {q for q, g in group.items() if g == name}
        sub = {mode: {q: x for q, x in v.items() if q in mine} for mode, v in values.items()}
        out[name] = Slice(name, len(mine), {mode: mean_scores(v, k) for mode, v in sub.items()},
                          compare_to_none(sub, k), {mode: len(f & mine) for mode, f in failed.items()})
    return out


def evaluate_retrieval(kg: KnowledgeGraph, folder: str | Path, modes: Sequence[WsdMode | Literal["bm25"]],
                       k: int = 10,
                       keep: bool = False, progress: Callable[[int], None] | None = None) -> RetrievalReport:
    data = read_beir(folder)
    rep = RetrievalReport(len(data.queries), k=k, problems=list(data.problems))
    t0 = time.perf_counter()
    kg.index_documents(data.corpus)
    rep.seconds["index"] = round(time.perf_counter() - t0, 2)
    corpus_ids = {d.id for d in data.corpus}
    exclude = {q.id: excluded_ids(q, corpus_ids) for q in data.queries}
    rep.aligned = sum(1 for q in data.queries if exclude[q.id] - {q.id})
    had = {g.value for g in kg.store.named_graphs()}
    asked: set[str] = set()
    values: dict[str, dict[str, dict[str, float]]] = {}
    failed: dict[str, set[str]] = {}  # mode → the queries that found no concept
    try:
        for mode in modes:
            t1 = time.perf_counter()
            if mode == "bm25":
                run = bm25_run(data, k, exclude)
            else:
                run, calls, tin, tout = {}, 0, 0, 0
                failed[mode] = set()
                for q in data.queries:
                    try:
                        a = kg.ask(q.text, lang=q.lang, k=k, wsd=mode, focus=q.focus, exclude_ids=exclude[q.id])
                        run[q.id] = [r.doc_id for r in a.results if r.doc_id in corpus_ids]
                        if a.question_iri:
                            asked.add(a.question_iri)
                        else:  # a query with no known concept ranks nothing (an empty answer); counted
                            log.info("query %s: %s", q.id, a.reason)
                            failed[mode].add(q.id)
                        calls, tin, tout = calls + a.llm_calls, tin + a.tokens_in, tout + a.tokens_out
                    except InputError as e:  # e.g. a focus on no word of the vocabularies; counted
                        log.info("query %s: %s", q.id, e)
                        run[q.id] = []
                        failed[mode].add(q.id)
                    if progress:
                        progress(1)
                rep.failures[mode] = len(failed[mode])
                if calls:
                    rep.llm[mode] = {"calls": calls, "tokens_in": tin, "tokens_out": tout}
            rep.runs[mode] = run
            values[mode] = per_query(run, data.qrels, k)
            rep.modes[mode] = mean_scores(values[mode], k)
            rep.seconds[mode] = round(time.perf_counter() - t1, 2)
    finally:
        if not keep:  # the corpus and the questions this run recorded (not ones asked before)
            kg.delete_many(d.id for d in data.corpus)
            kg.forget_questions(iris=asked - had)
    rep.per_query = values
    rep.vs_none = compare_to_none(values, k)
    rep.by_lang = _slices(values, {q.id: q.lang or "und" for q in data.queries}, failed, k)
    doc_of = {q.id: d for q in data.queries if (d := document_of(q.id, q.lang)) is not None}
    if len(doc_of) == len(data.queries) and len(set(doc_of.values())) > 1 and "none" in values:
        rep.by_document = _slices(values, doc_of, failed, k)
    return rep
