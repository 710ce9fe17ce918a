"""``index``, ``delete``, ``documents``."""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import WSD_HELP, print_json, progress_enabled, store_from_args, wsd_arg


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("index", help="index documents (txt, md, html, jsonl; folders walked)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--lang", help="language of documents that do not say (default: detected per paragraph)")
    p.add_argument("--wsd", type=wsd_arg, help=WSD_HELP + " (documents are always decided)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("delete", help="remove an indexed document")
    p.add_argument("doc_id", metavar="ID")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("documents", help="list indexed documents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_documents)


def cmd_index(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        bar = tqdm(unit="doc", disable=not progress_enabled(), file=sys.stderr)

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        try:
            rep = kg.index(args.paths, lang=args.lang, wsd=args.wsd, progress=bar.update, total=total)
        finally:
            bar.close()
        uses_llm = kg.mode(args.wsd).uses_llm
    if args.json:
        print_json(rep.__dict__ if hasattr(rep, "__dict__") else {f: getattr(rep, f) for f in rep.__slots__})
    else:
        langs = ", ".join(f"{k} {v}" for k, v in sorted(rep.languages.items()))
        print(f"indexed {rep.documents} documents ({rep.passages} passages; {langs}) in {rep.seconds:.1f} s: "
              f"{rep.mentions} mentions, {rep.ambiguous} ambiguous, {rep.decided} decided, "
              f"{rep.reused} decisions reused"
              + (f"; {rep.llm_calls} LLM calls ({1000 * rep.llm_calls / max(rep.mentions, 1):.1f} "
                 f"per 1,000 mentions)" if uses_llm or rep.llm_calls else ""))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        kg.delete(args.doc_id)
    print(f"deleted {args.doc_id}")
    return 0


def cmd_documents(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        docs = kg.documents()
    if args.json:
        print_json(docs)
    else:
        for d in docs:
            print(f"{d['id']}\t{d['lang']}\t{d['title']}")
    return 0
