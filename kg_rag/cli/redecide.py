"""``redecide``: re-decide the stored decisions of indexed documents with another selector."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from tqdm import tqdm

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import plural, print_json, progress_enabled, store_from_args, wsd_arg
from kg_rag.text.normalise import for_terminal


def _probability(value: str) -> float:
    try:
        p = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is no number; give a probability such "
                                         "as 0.8") from None
    if not 0.0 <= p <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..1; give a probability such as 0.8")
    return p


def _count(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is no whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1")
    return n


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "redecide",
        help="re-decide stored decisions of indexed documents with another selector (e.g. an LLM)",
        description="Re-decide the ambiguous mentions of indexed documents with another sense "
                    "selector. Each new decision is recorded as a PROV-O activity that revises "
                    "the old one (kgr:revisionOf), and the annotations point at it in the same "
                    "update, one per document; retrieval follows at once. A run that stops "
                    "(error, kill) resumes where it was when run again.")
    p.add_argument("--wsd", type=wsd_arg, default="llm",
                   help="the selector that re-decides (default: llm; knowledge+llm, knowledge, "
                        "first-sense … too)")
    p.add_argument("--below", type=_probability, metavar="P",
                   help="only decisions whose chosen reading has a probability below P "
                        "(unresolved ones too)")
    p.add_argument("--limit", type=_count, metavar="N",
                   help="re-decide at most N decisions in this run")
    p.add_argument("--batch", type=_count, default=16, metavar="N",
                   help="mentions of consecutive documents sent to the selector in one call "
                        "(default: 16, one LLM request); each document is still written alone")
    p.add_argument("--document", dest="documents", action="append", metavar="ID",
                   help="only this document (repeatable; default: every indexed document)")
    p.add_argument("--dry-run", action="store_true",
                   help="decide and report what would change, write nothing (an LLM is asked)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_redecide)


def cmd_redecide(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        bar = tqdm(unit="doc", disable=not progress_enabled(), file=sys.stderr)

        def total(n: int) -> None:
            bar.total = n
            bar.refresh()

        try:
            rep = kg.redecide(args.wsd, documents=args.documents, below=args.below,
                              limit=args.limit, dry_run=args.dry_run, progress=bar.update,
                              total=total, batch=args.batch)
        finally:
            bar.close()
    if args.json:
        out: dict[str, Any] = asdict(rep)
        out["redecided"] = rep.redecided
        out["changed"] = rep.changed
        out["items"] = [{**asdict(i), "changed": i.changed} for i in rep.items]
        print_json(out)
        return 0
    verb = "would read differently" if rep.dry_run else "read differently now"
    print(f"{plural(rep.documents, 'document')} examined, {plural(rep.decisions, 'decision')}: "
          f"{rep.redecided} re-decided with {rep.mode}, {rep.changed} {verb}"
          + (" (dry run: nothing written)" if rep.dry_run else
             f", {plural(rep.written_documents, 'document')} written"))
    skipped = [(rep.current, f"already decided by {rep.mode}"),
               (rep.confident, f"probability at least {args.below}"),
               (rep.stale, "candidates changed since indexing: re-index those documents"),
               (len(rep.kept), "no usable answer: the old decision stands")]
    for n, why in skipped:
        if n:
            print(f"  {n} skipped — {why}")
    if rep.limited:
        print(f"  stopped at --limit {args.limit}: run again for the rest")
    if rep.llm_calls:
        print(f"  LLM: {plural(rep.llm_calls, 'request')}, {rep.tokens_in} tokens in, "
              f"{rep.tokens_out} out")
    for i in rep.items:
        if i.changed:
            old = _short(i.old_concept)
            new = _short(i.new_concept)
            print(f"  {for_terminal(i.doc_id)} {i.start}:{i.end} {for_terminal(i.text)}: "
                  f"{old} → {new} ({i.selector})")
    for k in rep.kept:
        print(f"  {for_terminal(k.doc_id)} {k.start} {for_terminal(k.text)}: kept — "
              f"{for_terminal(k.reason)}")
    return 0


def _short(iri: str | None) -> str:
    if iri is None:
        return "nothing"
    return iri.rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri
