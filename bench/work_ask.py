"""Our worker for ``retrieve`` and ``grow``: ``KnowledgeGraph.ask`` latency per question.

    python -m bench.work_ask STORE QUESTIONS.jsonl K [CONCEPTS_OUT.json [N]] [--forget]

For each question (``{"text", "lang"}``): ``kg.ask(text, lang, k=K, wsd="knowledge")`` end to end
(the real API: annotate, decide, record, expand, rank). Questions with no known concept are
counted apart (the API answers them with no results and a reason). The first 3 questions
warm the caches and are reported apart. With CONCEPTS_OUT, the query concepts of each question
are rebuilt from the answer by the code ``ask`` runs (``retrieve.mention_reading``,
``question_concepts``, ``expand`` with ``kg.retrieval``), and the retrieval query ``rank`` runs,
``select-document-postings``, is timed alone (so the peer engine, rdflib, can run the same
query with the same VALUES), then ``rank`` itself (query, decision weights, scores, texts, spans,
labels) with the same concepts — for the first N questions counted (all without N: on a
100,000-document store the query alone takes seconds, and the peers run only the first few).

With ``--forget`` the questions it recorded are forgotten at the end (also when the run stops
half-way), with the decisions only they use (``KnowledgeGraph.forget_questions(iris,
decisions=True)``): the store holds what it held before, so the next stage (or repetition) asks
first-time questions again without a copy of the store being made for each run (a copy doubles
the disk a large stage needs).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError
from kg_rag.model import Answer
from kg_rag.pipeline.ranking_config import RetrievalConfig
from kg_rag.pipeline.retrieve import QueryConcept, expand, mention_reading, question_concepts, rank
from kg_rag.store import Store, Values

WARMUP = 3


def query_concepts(store: Store, answer: Answer, config: RetrievalConfig) -> list[QueryConcept]:
    """The expanded query concepts ``ask`` ranked the answer by (no focus, knowledge selector)."""
    readings = [mention_reading(r.mention, r.selection, r.decision, False) for r in answer.mentions]
    return expand(store, question_concepts(readings), config)


def main(argv: list[str]) -> int:
    forget = "--forget" in argv
    argv = [a for a in argv if a != "--forget"]
    if len(argv) < 3 or not argv[2].isdigit():
        print("usage: " + __doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    store, qfile, k = argv[0], argv[1], int(argv[2])
    concepts_out = argv[3] if len(argv) > 3 else None
    timed = int(argv[4]) if len(argv) > 4 else None
    qs = [json.loads(x) for x in Path(qfile).read_text(encoding="utf-8").splitlines() if x]
    t0 = time.perf_counter()
    kg = KnowledgeGraph.open(path=store)
    _ = kg.annotator, kg.selector("knowledge")
    t_open = time.perf_counter() - t0
    lat: list[float] = []
    warm: list[float] = []
    no_concept = 0
    results = 0
    analyse: list[float] = []
    retrieve: list[float] = []
    q_lat: list[float] = []
    rank_lat: list[float] = []
    dump: list[dict[str, object]] = []
    asked: list[str] = []      # the questions recorded (forgotten at the end with --forget)
    forgotten = 0
    try:
        for i, q in enumerate(qs):
            a = time.perf_counter()
            try:
                ans = kg.ask(q["text"], lang=q["lang"], k=k, wsd="knowledge")
            except InputError:
                no_concept += 1
                continue
            if not ans.question_iri:  # no known concept: an empty answer (no longer an InputError)
                no_concept += 1
                continue
            dt = time.perf_counter() - a
            asked.append(ans.question_iri)
            if i < WARMUP:
                warm.append(dt)
                continue
            lat.append(dt)
            results += len(ans.results)
            analyse.append(ans.timings_ms.get("analyse", 0.0) / 1000)
            retrieve.append(ans.timings_ms.get("retrieve", 0.0) / 1000)
            if concepts_out is not None and (timed is None or len(dump) < timed):
                qc = query_concepts(kg.store, ans, kg.retrieval)
                iris = [NamedNode(c.iri) for c in qc]
                if iris:
                    b = time.perf_counter()
                    rows = kg.store.select("select-document-postings", values=Values.column("concept", iris))
                    q_lat.append(time.perf_counter() - b)
                    b = time.perf_counter()
                    ranked = rank(kg.store, qc, k, ans.lang, kg.retrieval)
                    rank_lat.append(time.perf_counter() - b)
                    if [r.doc_id for r in ranked] != [r.doc_id for r in ans.results]:
                        raise SystemExit(f"rank on the rebuilt concepts disagrees with ask for {q['text']!r}")
                    dump.append({"concepts": [c.iri for c in qc], "rows": len(rows)})
    finally:   # a run that stops half-way forgets what it recorded too
        if forget:
            forgotten = kg.forget_questions(iris=asked, decisions=True)
        kg.close()
    if concepts_out is not None:
        Path(concepts_out).write_text(json.dumps(dump), encoding="utf-8")
    print(json.dumps({"open_s": t_open, "latencies": lat, "warmup": warm, "no_concept": no_concept,
                      "questions": len(qs), "results": results, "analyse": analyse,
                      "retrieve": retrieve, "query_latencies": q_lat,
                      "rank_latencies": rank_lat, "forgotten": forgotten}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
