"""``eval``: evaluation commands. ``eval wsd`` scores a sense selector on a Raganato-format corpus.

Each evaluation is a subcommand of the ``eval`` group, registered by one function of
``EVAL_COMMANDS`` below (``eval retrieval`` is added there by its module).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from kg_rag import InputError, WsdMode
from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import print_json, progress_enabled, store_from_args, wsd_arg
from kg_rag.settings import settings


def _register_wsd(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("wsd", help="word sense disambiguation against gold keys (P/R/F1)",
                       description="Score a sense selector on a Raganato et al. (2017) corpus; "
                                   "the first-sense and random baselines are shown beside it.")
    p.add_argument("--data", required=True, metavar="X.data.xml", help="unified-format corpus")
    p.add_argument("--gold", required=True, metavar="X.gold.key.txt", help="gold key file")
    p.add_argument("--lang", help="lexicon language (default: the corpus' lang attribute, else en)")
    p.add_argument("--wsd", type=wsd_arg, default=WsdMode.KNOWLEDGE,
                   help=f"the selector scored: a mode of {WsdMode.names()} but none (default knowledge)")
    p.add_argument("--window", type=int, default=1,
                   help="neighbouring sentences on each side used as context (default 1)")
    p.add_argument("--predictions", metavar="OUT.key.txt", help="write the chosen keys here")
    p.add_argument("--any-pos", action="store_true",
                   help="ignore the corpus' parts of speech: candidates of every part of speech, "
                        "as the product annotates raw text")
    p.add_argument("--lexicon", metavar="SOURCE",
                   help="candidates only from this loaded source (graph IRI or file name, as "
                        "`kg-rag sources` lists it); the rest of the store still serves as knowledge")
    p.add_argument("--threshold", type=float, metavar="P",
                   help="knowledge+llm: knowledge decisions with a probability below P go to the "
                        "LLM (default: KG_RAG_LLM_THRESHOLD, else 0.8)")
    p.add_argument("--run-record", metavar="RUN.json",
                   help="write the run record here (default for the LLM modes: OUT.run.json "
                        "beside --predictions OUT.key.txt, else wsd-run-CORPUS-MODE-TIME.json "
                        "in the current directory)")
    p.add_argument("--price-in", type=float, metavar="USD",
                   help="price per million input tokens: the run record gets the cost")
    p.add_argument("--price-out", type=float, metavar="USD",
                   help="price per million output tokens (with --price-in)")
    p.add_argument("--set-default", action="store_true",
                   help="make this mode the store's default sense selection, refused when its "
                        "F1 is below the first-sense baseline's")
    p.add_argument("--force", action="store_true",
                   help="with --set-default: set it even when it scored below the first sense")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    p.set_defaults(func=cmd_wsd)


#: one registration function per ``eval`` subcommand
from kg_rag.cli.eval_retrieval import register_retrieval  # noqa: E402

EVAL_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [_register_wsd, register_retrieval]  # type: ignore[type-arg]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("eval", help="evaluate sense selection or retrieval on gold data")
    sub = p.add_subparsers(dest="eval_command", metavar="EVALUATION", required=True)
    for reg in EVAL_COMMANDS:
        reg(sub)


def cmd_wsd(args: argparse.Namespace) -> int:
    import kg_rag.eval.runs as runs
    from kg_rag.eval.corpus import read_corpus
    from kg_rag.eval.report import wsd_table
    from kg_rag.eval.wsd import evaluate

    if args.wsd is WsdMode.NONE:
        raise InputError("eval wsd scores a sense selector; --wsd none has none (pick another mode)")
    if args.force and not args.set_default:
        raise InputError("--force only goes with --set-default")
    if args.threshold is not None and not 0 <= args.threshold <= 1:
        raise InputError("--threshold must be a probability from 0 to 1")
    runs.check_prices(args.price_in, args.price_out)
    corpus_name = read_corpus(args.data).source  # a bad corpus fails here, before anything runs
    record_to = runs.record_path(args.run_record, args.predictions, corpus_name, args.wsd)
    config = settings()
    if args.threshold is not None:
        config = config.with_(llm_threshold=args.threshold)
    with KnowledgeGraph(store_from_args(args), config) as kg:
        selector = kg.selector(args.wsd)
        bar = None
        if progress_enabled() and not args.json:
            from tqdm import tqdm

            n = len(read_corpus(args.data).instances)
            bar = tqdm(total=n, unit="inst", file=sys.stderr, desc="eval wsd", leave=False)
        report = evaluate(kg.store, selector, args.data, args.gold, lang=args.lang, window=args.window,
                          predictions=args.predictions, any_pos=args.any_pos, lexicon=args.lexicon,
                          progress=(lambda k: bar.update(k)) if bar is not None else None,
                          threshold=config.llm_threshold)
        if bar is not None:
            bar.close()
        if record_to is not None:
            runs.write(record_to, runs.build(report, mode=args.wsd, selector=selector,
                                             data=args.data, gold=args.gold, window=args.window,
                                             price_in=args.price_in, price_out=args.price_out))
        doc = report.as_dict()
        if record_to is not None:
            doc["run_record"] = str(record_to)
        if args.json:
            print_json(doc)
        else:
            print(wsd_table(report))
            if record_to is not None:
                print(f"\nrun record: {record_to}")
        sys.stdout.flush()
        if args.set_default:  # after the scores: a refusal still shows what was measured
            print(f"store default set: {runs.set_default(kg.store, report, args.wsd, selector, args.force)}",
                  file=sys.stderr)
    return 0
