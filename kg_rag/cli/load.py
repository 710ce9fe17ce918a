"""``load``, ``sources``, ``drop-source``, ``stats``: vocabularies in the store."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from tqdm import tqdm

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import plural, print_json, progress_enabled, store_from_args
from kg_rag.errors import InputError
from kg_rag.text.normalise import for_terminal


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("load", help="load SKOS / OntoLex / WordNet LMF files (one named graph each)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--format", default="auto", choices=KnowledgeGraph.load_formats(),
                   help="syntax or pipeline (default: by file name and content)")
    p.add_argument("--graph", metavar="IRI",
                   help="named graph for the source (default …/id/source/<file stem>; one file only)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_load)

    p = sub.add_parser("sources", help="list loaded sources (the catalog)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sources)

    p = sub.add_parser("drop-source", help="remove a loaded source and its catalog record")
    p.add_argument("graph", metavar="SOURCE",
                   help="the source's graph IRI, or its file name as `kg-rag sources` lists it")
    p.add_argument("--reannotate", action="store_true",
                   help="annotate the documents that used the source's concepts again, from "
                        "their stored text, with what is still loaded (without it they keep "
                        "annotations that point at nothing, and a warning names them)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_drop)

    p = sub.add_parser("stats", help="triples per named graph, labels per language")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)


def cmd_load(args: argparse.Namespace) -> int:
    if args.graph and len(args.files) > 1:
        raise InputError("--graph names the graph of ONE source; load the files one at a time")
    reports = []
    # every file checked before the first is written (two files into one source graph too)
    KnowledgeGraph.load_targets(args.files, fmt=args.format, graph=args.graph)
    with KnowledgeGraph(store_from_args(args, create=True)) as kg:
        # a store that cannot take a load (one a running kg-rag serve holds) says so before a
        # file is read and before anything is sent, not halfway through the first file
        kg.store.check_loadable()
        for f in args.files:
            bar = tqdm(desc=f, unit=" triples", unit_scale=True, disable=not progress_enabled(),
                       file=sys.stderr)
            try:
                rep = kg.load([f], fmt=args.format, graph=args.graph, progress=bar.update)[0]
            finally:
                bar.close()
            reports.append(rep)
            if not args.json:
                print(f"{rep.path}: {rep.kind} → <{rep.graph}>: {plural(rep.triples, 'triple')}, "
                      f"{plural(rep.concepts, 'concept')}, {plural(rep.entries, 'entry', 'entries')}, "
                      f"{plural(rep.senses, 'sense')}, "
                      f"languages {', '.join(rep.languages) or '-'} ({rep.seconds:.1f} s)")
            for w in rep.warnings:
                print(f"  warning: {for_terminal(w)}", file=sys.stderr)
    if args.json:
        print_json([asdict(r) for r in reports])
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        records = kg.sources()
    if args.json:
        print_json(records)
    else:
        for r in records:
            note = "\tstale: loaded by an older mapping, reload it" if r["stale"] else ""
            print(f"<{r['graph']}>\t{r['kind']}\t{r['triples']} triples\t{','.join(r['languages'])}\t"
                  f"{r['title']}\t{r['loaded_at']}{note}")
    return 0


def cmd_drop(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        graph = kg.source_graph(args.graph)
        used = kg.drop_source(graph, reannotate=args.reannotate)
    if args.json:
        print_json({"dropped": graph, "documents": used,
                    "reannotated": bool(used and args.reannotate)})
        return 0
    print(f"dropped <{graph}>")
    if used and args.reannotate:
        print(f"annotated {len(used)} document{'s' if len(used) != 1 else ''} again "
              f"({sum(used.values())} annotations had named its concepts)")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with KnowledgeGraph(store_from_args(args)) as kg:
        stats = kg.stats(labels=True)
    graphs = list(stats["graphs"].items())
    langs = [(r["graph"], r["lang"], r["count"]) for r in stats["labels"]]
    if args.json:
        print_json({
            "graphs": [{"graph": g, "triples": n} for g, n in graphs],
            "labels": [{"graph": g, "lang": lang, "count": n} for g, lang, n in langs],
        })
        return 0
    print(f"{plural(sum(n for _, n in graphs), 'triple')} in {plural(len(graphs), 'named graph')}")
    by_graph: dict[str, list[str]] = {}
    for g, lang, n in langs:
        by_graph.setdefault(g, []).append(f"{lang or '(none)'} {n}")
    for g, n in graphs:
        extra = "; labels: " + ", ".join(by_graph[g]) if g in by_graph else ""
        print(f"<{g}>\t{n}{extra}")
    return 0
