"""``align`` (propose links from a dictionary's senses to a thesaurus's concepts) and
``alignments`` (list them; accept or reject them)."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import print_json, store_from_args
from kg_rag.text.normalise import for_terminal

STATUSES = ("proposed", "accepted", "rejected")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "align", help="propose links from a dictionary's senses to a thesaurus's concepts",
        description="Score every sense of DICTIONARY against the concepts of THESAURUS whose labels "
                    "match its written forms or its translations (in any language), by label "
                    "agreement, definition/scope-note overlap and neighbourhood; write one "
                    "proposal per sense, with its score, to the alignment graph (apart from the "
                    "sources). DICTIONARY may also be a second thesaurus: its concepts are aligned by "
                    "their labels and notes, and an accepted link states skos:closeMatch. Sources "
                    "are named as `kg-rag sources` lists them. Review with `kg-rag alignments`.")
    p.add_argument("dictionary", metavar="DICTIONARY_SOURCE", help="a dictionary, or a second thesaurus")
    p.add_argument("thesaurus", metavar="THESAURUS_SOURCE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_align)

    p = sub.add_parser(
        "alignments", help="list alignment links; accept or reject them",
        description="Without an action: list the links (best score first). `accept ID…` or "
                    "`accept --above SCORE` makes links count (an accepted link is a sense's "
                    "ontolex:reference, or its concept's skos:closeMatch, for annotation and "
                    "selection); `reject ID…` takes them back. ID: as listed (a unique prefix of "
                    "6+ characters will do) or the link's IRI.")
    p.add_argument("--status", choices=STATUSES, help="only links with this status")
    p.add_argument("--json", action="store_true")
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    a = acts.add_parser("accept", help="accept links by id, or every proposed one scored ≥ --above")
    which = a.add_mutually_exclusive_group(required=True)
    which.add_argument("ids", nargs="*", default=[], metavar="ID")
    which.add_argument("--above", type=float, metavar="SCORE")
    a.add_argument("--json", action="store_true", dest="action_json")
    r = acts.add_parser("reject", help="reject links by id")
    r.add_argument("ids", nargs="+", metavar="ID")
    r.add_argument("--json", action="store_true", dest="action_json")
    p.set_defaults(func=cmd_alignments)


def _short(iri: str) -> str:
    return iri.rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]


def cmd_align(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        rep = kg.align(args.dictionary, args.thesaurus)
    if args.json:
        print_json(asdict(rep))
        return 0
    print(f"aligned <{rep.dictionary}> with <{rep.thesaurus}>: {rep.senses} senses, "
          f"{rep.with_candidates} with candidate concepts, {len(rep.proposals)} proposals "
          f"(run <{rep.run}>)")
    for p in sorted(rep.proposals, key=lambda x: -x.score):
        ev = p.evidence
        print(f"{p.score:.3f}\t{for_terminal(p.lemma)}\t{_short(p.sense)}\t→ {_short(p.concept)}\t"
              f"languages {','.join(ev.agreeing) or '-'}; gloss {ev.gloss:.2f}; "
              f"neighbours {ev.neighbours}")
    print("review: kg-rag alignments [accept ID…|--above SCORE] [reject ID…]")
    return 0


def _row(x: Any) -> str:
    return (f"{x.id}\t{x.status}\t{x.score:.3f}\t{for_terminal(x.lemma)}\t{_short(x.sense)}\t"
            f"→ {_short(x.concept)}\t<{x.concept}>")


def cmd_alignments(args: argparse.Namespace) -> int:
    as_json = args.json or getattr(args, "action_json", False)
    with KnowledgeGraph(store_from_args(args)) as kg:
        if args.action == "accept":
            links = kg.review_alignments(args.ids, "accepted", above=args.above)
        elif args.action == "reject":
            links = kg.review_alignments(args.ids, "rejected")
        else:
            links = kg.alignments(args.status)
    if as_json:
        print_json([asdict(x) for x in links])
        return 0
    if args.action:
        print(f"{len(links)} link{'s' if len(links) != 1 else ''} {args.action}ed")
    for x in links:
        print(_row(x))
    return 0
