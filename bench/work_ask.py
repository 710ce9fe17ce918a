"""Our worker for ``retrieve`` and ``grow``: ``KnowledgeGraph.ask`` latency per question.

    python -m bench.work_ask STORE QUESTIONS.jsonl K [CONCEPTS_OUT.json]

For each question (``{"text", "lang"}``): ``kg.ask(text, lang, k=K, wsd="knowledge")`` end to end
(the real API: annotate, decide, record, expand, rank). Questions with no known concept are
counted apart (the API refuses them with an InputError, as it should). The first 3 questions
warm the caches and are reported apart. With CONCEPTS_OUT, the expanded query concepts of each
question are rebuilt from the answer with the public ``retrieve.expand`` and the retrieval query
``select-documents-by-body`` is timed alone, so the peer engine (rdflib) can run the same query
with the same VALUES.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError
from kg_rag.pipeline.retrieve import EXPANSION, QueryConcept, expand
from kg_rag.store import Values

WARMUP = 3


def query_concepts(answer: object) -> list[QueryConcept]:
    concepts: dict[str, QueryConcept] = {}
    for rep in answer.mentions:  # type: ignore[attr-defined]
        m = rep.mention
        if m.ambiguous:
            chosen = rep.selection.chosen if rep.selection is not None else None
            cs = (chosen.concept,) if chosen is not None else ()
        else:
            cs = m.concepts
        for c in cs:
            concepts[c] = QueryConcept(c, 1.0)
    return list(concepts.values())


def main(argv: list[str]) -> int:
    store, qfile, k = argv[0], argv[1], int(argv[2])
    concepts_out = argv[3] if len(argv) > 3 else None
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
    dump: list[dict[str, object]] = []
    for i, q in enumerate(qs):
        a = time.perf_counter()
        try:
            ans = kg.ask(q["text"], lang=q["lang"], k=k, wsd="knowledge")
        except InputError:
            no_concept += 1
            continue
        dt = time.perf_counter() - a
        if i < WARMUP:
            warm.append(dt)
            continue
        lat.append(dt)
        results += len(ans.results)
        analyse.append(ans.timings_ms.get("analyse", 0.0) / 1000)
        retrieve.append(ans.timings_ms.get("retrieve", 0.0) / 1000)
        if concepts_out is not None:
            qc = expand(kg.store, query_concepts(ans), EXPANSION)
            iris = [NamedNode(c.iri) for c in qc]
            if iris:
                b = time.perf_counter()
                rows = kg.store.select("select-documents-by-body", values=Values.column("concept", iris))
                q_lat.append(time.perf_counter() - b)
                dump.append({"concepts": [c.iri for c in qc], "rows": len(rows)})
    kg.close()
    if concepts_out is not None:
        Path(concepts_out).write_text(json.dumps(dump), encoding="utf-8")
    print(json.dumps({"open_s": t_open, "latencies": lat, "warmup": warm, "no_concept": no_concept,
                      "questions": len(qs), "results": results, "analyse": analyse,
                      "retrieve": retrieve, "query_latencies": q_lat}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
