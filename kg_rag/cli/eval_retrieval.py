"""``eval retrieval``: BEIR-layout retrieval evaluation per sense-selection mode."""

from __future__ import annotations

import argparse
import sys

from ..api import KnowledgeGraph
from .common import print_json, progress_enabled, store_from_args

METRICS = ("ndcg@10", "p@1", "p@5", "mrr@10", "recall@10")


def register_retrieval(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("retrieval", help="retrieval quality per --wsd mode on a BEIR folder (nDCG@10, P@1, …)",
                       description="Index the corpus, ask every query (focus from metadata start/end), "
                                   "exclude the query's own id, score against qrels/test.tsv.")
    p.add_argument("folder", metavar="DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv")
    p.add_argument("--wsd", default="none,knowledge",
                   help="comma-separated modes: none, knowledge, llm, first-sense, random (default none,knowledge); "
                        "bm25 is always added as the reference row")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--keep", action="store_true", help="keep the indexed corpus in the store")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_retrieval)


def cmd_retrieval(args: argparse.Namespace) -> int:
    from ..eval.retrieval import evaluate_retrieval

    modes = [m.strip() for m in args.wsd.split(",") if m.strip()]
    if "bm25" not in modes:
        modes.append("bm25")
    with KnowledgeGraph(store_from_args(args)) as kg:
        bar = None
        if progress_enabled() and not args.json:
            from tqdm import tqdm

            bar = tqdm(unit="query", file=sys.stderr, desc="eval retrieval", leave=False)
        try:
            rep = evaluate_retrieval(kg, args.folder, modes, k=args.k, keep=args.keep,
                                     progress=bar.update if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
    if args.json:
        print_json(rep.as_dict())
        return 0
    print(f"{rep.queries} queries; corpus indexed in {rep.seconds.get('index', 0):.1f} s")
    print("| mode | " + " | ".join(METRICS) + " | no concept |")
    print("|---|" + "---:|" * (len(METRICS) + 1))
    for mode, m in rep.modes.items():
        cells = " | ".join(f"{m.get(k, 0.0):.3f}" for k in METRICS)
        print(f"| {mode} | {cells} | {rep.failures.get(mode, '-')} |")
    for mode, llm in rep.llm.items():
        print(f"{mode}: {llm['calls']} LLM calls, {llm['tokens_in']} tokens in, {llm['tokens_out']} out")
    for p in rep.problems:
        print(f"note: {p}")
    return 0
