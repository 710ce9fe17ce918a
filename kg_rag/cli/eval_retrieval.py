"""``eval retrieval``: BEIR-layout retrieval evaluation per sense-selection mode."""

from __future__ import annotations

import argparse
import sys
from typing import Literal

from kg_rag import WsdMode
from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import print_json, progress_enabled, store_from_args, wsd_arg


def _modes(value: str) -> list[WsdMode | Literal["bm25"]]:
    """``--wsd`` of ``eval retrieval``: comma-separated modes (and ``bm25``); exit 2 on a typo."""
    modes: list[WsdMode | Literal["bm25"]] = []
    for name in (m.strip() for m in value.split(",")):
        if name == "bm25":
            modes.append("bm25")
        elif name:
            modes.append(wsd_arg(name))
    return modes


def register_retrieval(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from kg_rag.eval.retrieval import EXCLUSION_RULE

    p = sub.add_parser("retrieval", help="retrieval quality per --wsd mode on a BEIR folder (nDCG@10, P@1, …)",
                       description="Index the corpus, ask every query (focus from metadata start/end, "
                                   "language from metadata.lang), score against qrels/test.tsv, and "
                                   "compare every mode with none query by query, over all queries and "
                                   "per query language. Left out of every mode's ranking (bm25 too): "
                                   f"{EXCLUSION_RULE}.")
    p.add_argument("folder", metavar="DIR", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv")
    p.add_argument("--wsd", type=_modes, default=[WsdMode.NONE, WsdMode.KNOWLEDGE],
                   help=f"comma-separated modes of {WsdMode.names()} (default none,knowledge); "
                        "bm25 is always added as the reference row")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--keep", action="store_true", help="keep the indexed corpus and the questions it recorded in the store")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_retrieval)


def cmd_retrieval(args: argparse.Namespace) -> int:
    from kg_rag.eval.retrieval import evaluate_retrieval

    modes = list(args.wsd)
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
    print(rep.table())
    return 0
