"""``questions`` (list the recorded questions) and ``forget-questions`` (drop them)."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import plural, print_json, store_from_args
from kg_rag.errors import InputError
from kg_rag.text.normalise import for_terminal


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("questions", help="list the recorded questions, newest first",
                       description="Every ask/annotate keeps its question, mentions and decisions "
                                   "(one graph per distinct question, language and selector).")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_questions)

    p = sub.add_parser("forget-questions", help="drop recorded questions (their decisions stay)",
                       description="Drop the graphs of recorded questions in one update: those "
                                   "older than --older-than DAYS, or all with --all.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--older-than", type=float, metavar="DAYS",
                       help="questions asked more than DAYS days ago")
    which.add_argument("--all", action="store_true", help="every recorded question")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_forget)


def cmd_questions(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        qs = kg.questions()
    if args.json:
        print_json(qs)
    else:
        for q in qs:
            print(f"{q['time']}\t{q['lang']}\t{for_terminal(q['text'])}\t<{q['iri']}>")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    before = None
    if args.older_than is not None:
        if args.older_than < 0:
            raise InputError("--older-than needs a number of days ≥ 0")
        before = datetime.now(timezone.utc) - timedelta(days=args.older_than)
    with KnowledgeGraph(store_from_args(args)) as kg:
        n = kg.forget_questions(older_than=before)
    if args.json:
        print_json({"forgotten": n})
    else:
        print(f"forgot {plural(n, 'question')}")
    return 0
