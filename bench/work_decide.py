"""Our worker for ``decide``: time per ambiguous mention (≤ 10 candidates), knowledge vs first sense.

    python -m bench.work_decide STORE SENTENCES.jsonl MAX_MENTIONS

Each sentence (``{"text", "lang"}``) is annotated by the real annotator; every ambiguous mention
with 2–10 candidates is then decided as :func:`kg_rag.pipeline.decide.decide` does it — evidence fetched
by :func:`~kg_rag.pipeline.evidence.fetch_evidence`, one :class:`SelectionRequest` with the
sentence as context and the other mentions — by the knowledge selector and by the first-sense
baseline (which needs no evidence: its time is the candidate lookup it gets for free). Timed
apart: annotation, evidence, each selector's ``select``. Then the same mentions batched — one
``select`` per sentence with all its mentions, warm (wall, CPU, mentions) — and
``analysis.decide`` per sentence end to end (reuse check + evidence + selection of all its
ambiguous mentions), per mention.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.model import SelectionRequest
from kg_rag.pipeline.decide import Unit, decide
from kg_rag.pipeline.evidence import EVIDENCE, fetch_evidence


def main(argv: list[str]) -> int:
    store, sent_file, max_mentions = argv[0], argv[1], int(argv[2])
    sents = [json.loads(x) for x in Path(sent_file).read_text(encoding="utf-8").splitlines() if x]
    kg = KnowledgeGraph.open(path=store)
    t0 = time.perf_counter()
    ann = kg.annotator
    know = kg.selector("knowledge")
    first = kg.selector("first-sense")
    assert know is not None and first is not None
    warm = getattr(know, "warm_up", None)
    if callable(warm):  # the knowledge base (graph, glosses) is built once per process
        warm()
    _ = ann.lexicon
    t_setup = time.perf_counter() - t0
    t_ann: list[float] = []
    t_ev: list[float] = []
    t_know: list[float] = []
    t_first: list[float] = []
    n_cands: list[int] = []
    t_cpu: list[float] = []   # CPU time of evidence + knowledge select (steadier when the machine is busy)
    units: list[Unit] = []
    batches: list[list[SelectionRequest]] = []  # per sentence: every picked mention, one select
    for s in sents:
        if len(t_know) >= max_mentions:
            break
        a = time.perf_counter()
        mentions = list(ann.annotate(s["text"], s["lang"]))
        t_ann.append(time.perf_counter() - a)
        picked = [m for m in mentions if m.ambiguous and len(m.candidates) <= 10]
        if picked:
            units.append(Unit(0, len(s["text"]), s["lang"], s["text"], mentions))
            batches.append([])
        for m in picked:
            others = tuple(x for x in mentions if x is not m)
            a, ca = time.perf_counter(), time.process_time()
            ev = fetch_evidence(kg.store, m.candidates)
            b = time.perf_counter()
            req = SelectionRequest(mention=m, context=s["text"], context_lang=s["lang"],
                                   evidence=ev, others=others)
            know.select([req])
            batches[-1].append(req)
            c, cc = time.perf_counter(), time.process_time()
            t_cpu.append(cc - ca)
            first.select([req])
            d = time.perf_counter()
            t_ev.append(b - a)
            t_know.append(c - b)
            t_first.append(d - c)
            n_cands.append(len(m.candidates))
    # batched: all picked mentions of a sentence in ONE select (as decide() calls it), evidence
    # in hand; pass 1 after the per-mention loop above (signatures built), pass 2 again: warm
    batched: list[float] = []
    for _ in range(2):
        a, ca = time.perf_counter(), time.process_time()
        for reqs in batches:
            know.select(reqs)
        batched = [time.perf_counter() - a, time.process_time() - ca, float(sum(len(b) for b in batches))]
    # end to end per sentence, cold evidence cache again (decide() as the indexer calls it)
    kg.derived.table(EVIDENCE).clear()
    per_mention_e2e: list[float] = []
    for u in units:
        n = sum(1 for m in u.mentions if m.ambiguous)
        a = time.perf_counter()
        decide(kg.store, [u], know)
        per_mention_e2e.append((time.perf_counter() - a) / max(n, 1))
    kg.close()
    print(json.dumps({"setup_s": t_setup, "annotate": t_ann, "evidence": t_ev, "knowledge": t_know,
                      "first_sense": t_first, "knowledge_cpu": t_cpu, "candidates": n_cands, "decide_per_mention": per_mention_e2e,
                      "batched_wall_cpu_n": batched,
                      "mentions": len(t_know), "sentences": len(t_ann),
                      "agent": f"{know.agent.name} {know.agent.version}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
