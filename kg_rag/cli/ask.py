"""``ask``, ``annotate``, ``explain``."""

from __future__ import annotations

import argparse
import re

from kg_rag.api import KnowledgeGraph, check_min_relevance
from kg_rag.cli.common import WSD_HELP, print_json, store_from_args, text_arg, wsd_arg
from kg_rag.cli.render import answer_text, mention_lines, same_looking
from kg_rag.errors import InputError
from kg_rag.serialize import answer_dict, language_dict, mention_dict
from kg_rag.text.normalise import for_terminal

_OFFSETS = re.compile(r"\s*(\d+)\s*:\s*(\d+)\s*")


def _focus(value: str) -> tuple[int, int] | str:
    """``--focus``: START:END offsets, or a word or phrase of the question (``word#2``: its
    second occurrence), found by the API in the question as it cleans it."""
    m = _OFFSETS.fullmatch(value)
    if m:
        return int(m.group(1)), int(m.group(2))
    if not value.strip():
        raise InputError("--focus is empty; give START:END offsets or a word of the question")
    return value


def _min_score(value: str) -> float:
    """``--min-score``: a relevance between 0 and 1 (a usage error otherwise)."""
    try:
        return check_min_relevance(float(value))
    except (ValueError, InputError):
        raise argparse.ArgumentTypeError(f"{value!r} is no number between 0 and 1") from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("ask", help="retrieve documents for a question by its chosen concepts")
    p.add_argument("question", help="the question ('-': read it from standard input)")
    p.add_argument("--lang", default="auto", help="language code or auto (default)")
    p.add_argument("-k", type=int, default=10, help="number of documents (default 10)")
    p.add_argument("--wsd", type=wsd_arg, help=WSD_HELP)
    p.add_argument("--min-score", type=_min_score, default=0.0, metavar="R",
                   help="leave out documents whose relevance (0-1, the expected share of the "
                        "question's words whose meaning the document shares) is below R")
    p.add_argument("--focus", type=str, metavar="WORD|START:END",
                   help="the word or phrase the question is about ('bank#2': its second "
                        "occurrence), or its START:END character offsets")
    p.add_argument("--scheme", metavar="SCHEME",
                   help="only readings of this concept scheme (its IRI) or loaded source (its "
                        "name or graph IRI, as `kg-rag sources` lists them)")
    p.add_argument("--no-record", dest="record", action="store_false",
                   help="write nothing: neither the question nor its decisions are stored (no "
                        "explanation by IRI afterwards); for read-only endpoints")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("annotate", help="show the mentions, candidates and chosen senses of a text")
    p.add_argument("text", help="the text ('-': read it from standard input)")
    p.add_argument("--lang", default="auto")
    p.add_argument("--wsd", type=wsd_arg, help=WSD_HELP)
    p.add_argument("--scheme", metavar="SCHEME",
                   help="only readings of this concept scheme (its IRI) or loaded source (its "
                        "name or graph IRI, as `kg-rag sources` lists them)")
    p.add_argument("--no-record", dest="record", action="store_false",
                   help="write nothing: the decisions are not stored")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_annotate)

    p = sub.add_parser("explain", help="explain a question, document, annotation or decision IRI")
    p.add_argument("iri", help="an IRI (also as <IRI>, as printed) or a short id kg-rag shows: a "
                               "question's or decision's hash, a document id")
    p.add_argument("--document", metavar="DOC_IRI",
                   help="with a question IRI: why this document (a result's doc_iri) answered it")
    p.add_argument("--json", action="store_true", help="summary as JSON")
    p.add_argument("--format", choices=("text", "jsonld", "turtle"), default="text")
    p.set_defaults(func=cmd_explain)


def cmd_ask(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        focus = _focus(args.focus) if args.focus else None
        answer = kg.ask(text_arg(args.question, "question"), lang=args.lang, k=args.k, wsd=args.wsd, focus=focus,
                        scheme=args.scheme, min_score=args.min_score,
                        record_question=args.record)
        if args.json:
            print_json(answer_dict(answer))
        else:
            print(answer_text(kg, answer))
    return 0


def cmd_annotate(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        text = text_arg(args.text, "text")
        guess, reports = kg.annotate_text(text, lang=args.lang, wsd=args.wsd, scheme=args.scheme,
                                          record_question=args.record)
        if args.json:
            print_json({"text": kg.question_text(text), "lang": guess.lang, "language": language_dict(guess),
                        "mentions": [mention_dict(r) for r in reports]})
        else:
            labels = kg.labels([c.concept for r in reports for c in r.mention.candidates], guess.lang)
            same = same_looking(reports, labels)
            glosses = kg.glosses(same, guess.lang) if same else {}
            lines = [f"language: {guess.note()}", *mention_lines(reports, labels, glosses)]
            if not reports:
                lines.append("no mentions: none of its words is a label or written form in this store")
            print(for_terminal("\n".join(lines)))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        ex = kg.explain(args.iri, document=args.document)
    if args.json:
        print_json(ex.summary)
    elif args.format == "jsonld":
        print(ex.jsonld())
    elif args.format == "turtle":
        print(ex.turtle())
    else:
        print(ex.text())
    return 0
