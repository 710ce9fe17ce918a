"""Knowledge selection throughput on the WSD dev sets, and every decision's probabilities.

    python -m bench.work_select STORE OUT.json DATA.xml [DATA.xml …] [--per-mention] [--repeat N]
                                [--config '{"hops": 1}']

The requests are those of ``kg-rag eval wsd`` (:func:`kg_rag.eval.wsd._requests`: candidates of
the lemma with the corpus' POS, the sentence ±1 as context, the text's other instances as
``others``), one ``select`` per text as ``eval`` and the indexer call it (``--per-mention``: one
``select`` per mention, the path of a single-mention annotate). The knowledge base is warmed
first; each set is selected ``--repeat`` times: the first pass builds the candidates' gloss
signatures (the selector's cache), the fastest of the others is "warm".
OUT.json holds, per set, the selections (instance → chosen id and scores) of the first pass, so
two code versions can be compared decision by decision (``--compare OLD.json NEW.json``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from kg_rag.api import KnowledgeGraph
from kg_rag.eval.corpus import read_corpus
from kg_rag.eval.wsd import Candidates, _requests
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig
from kg_rag.senses.knowledge.selector import KnowledgeSelector


def run(args: argparse.Namespace) -> int:
    kg = KnowledgeGraph.open(path=args.store)
    if args.config:  # constants other than the tuned ones, e.g. '{"hops": 1}'
        cfg = dataclasses.replace(KnowledgeSelectorConfig(), **json.loads(args.config))
        sel: Any = KnowledgeSelector(kg.store, cfg)
    else:
        sel = kg.selector("knowledge")
    assert sel is not None
    warm = getattr(sel, "warm_up", None)
    if callable(warm):
        warm()
    out: dict[str, object] = {"agent": sel.agent.version, "sets": {}}
    for data in args.data:
        corpus = read_corpus(data)
        lang = (corpus.lang or "en").lower()
        find = Candidates(kg.store, None)
        batches = _requests(corpus, lang, find, 1, lambda c: fetch_evidence(kg.store, c))
        batches = [[it for it in b if it.request.mention.candidates] for b in batches]
        n = sum(len(b) for b in batches)
        amb = sum(1 for b in batches for it in b if len(it.request.mention.candidates) > 1)
        best = float("inf")
        first = 0.0
        decisions: dict[str, object] = {}
        lat: list[float] = []
        sel_cache = getattr(sel, "_signatures", None)
        if sel_cache is not None:  # the first pass builds every candidate's gloss signature
            sel_cache.clear()
        best_cpu = first_cpu = 0.0
        for rep in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            for b in batches:
                groups = [[it] for it in b] if args.per_mention else [b]
                for g in groups:
                    a = time.perf_counter()
                    res = sel.select([it.request for it in g])
                    lat.append((time.perf_counter() - a) / len(g))
                    if rep == 0:
                        for it, s in zip(g, res, strict=True):
                            decisions[it.token.instance] = {
                                "chosen": s.chosen.id if s.chosen else None,
                                "scores": dict(s.scores), "confidence": s.confidence}
            took, cpu = time.perf_counter() - t0, time.process_time() - c0
            if rep == 0:
                first, first_cpu = took, cpu
                lat = []
            elif took < best:
                best, best_cpu = took, cpu
        if args.repeat < 2:
            best, best_cpu = first, first_cpu
        lat.sort()
        name = Path(data).name
        out["sets"][name] = {  # type: ignore[index]
            "mentions": n, "ambiguous": amb, "seconds": best, "mentions_per_s": n / best,
            "first_pass_seconds": first, "cpu_seconds": best_cpu, "first_pass_cpu_seconds": first_cpu,
            "p50_ms": 1000 * lat[len(lat) // 2], "decisions": decisions}
        print(f"{name}: {n} mentions ({amb} ambiguous); first pass {first:.2f} s = {n / first:.0f} "
              f"mentions/s (CPU {first_cpu:.2f} s); warm (best of {max(args.repeat - 1, 1)}): {best:.2f} s "
              f"= {n / best:.0f} mentions/s (CPU {best_cpu:.2f} s = {n / max(best_cpu, 1e-9):.0f}/CPU-s), "
              f"per-call p50 {1000 * lat[len(lat) // 2]:.2f} ms/mention", file=sys.stderr)
    Path(args.out).write_text(json.dumps(out), encoding="utf-8")
    kg.close()
    return 0


def compare(old_file: str, new_file: str) -> int:
    old = json.loads(Path(old_file).read_text(encoding="utf-8"))
    new = json.loads(Path(new_file).read_text(encoding="utf-8"))
    for name, o in old["sets"].items():
        n = new["sets"].get(name)
        if n is None:
            continue
        diff_choice = 0
        max_dp = 0.0
        for iid, d in o["decisions"].items():
            e = n["decisions"].get(iid)
            if e is None:
                continue
            diff_choice += d["chosen"] != e["chosen"]
            for k, p in d["scores"].items():
                max_dp = max(max_dp, abs(p - e["scores"].get(k, 0.0)))
        print(f"{name}: {len(o['decisions'])} decisions, {diff_choice} chose differently, "
              f"max |Δp| {max_dp:.2e}; {o['mentions_per_s']:.0f} → {n['mentions_per_s']:.0f} mentions/s")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--compare":
        return compare(argv[1], argv[2])
    p = argparse.ArgumentParser(prog="python -m bench.work_select")
    p.add_argument("store")
    p.add_argument("out")
    p.add_argument("data", nargs="+")
    p.add_argument("--per-mention", action="store_true")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--config", default="", help="JSON: KnowledgeSelectorConfig fields to override")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
