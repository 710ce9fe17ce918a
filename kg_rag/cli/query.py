"""``sparql``: run a read-only SPARQL query against the store and print the answer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import store_from_args, text_arg
from kg_rag.errors import InputError, QueryError
from kg_rag.settings import settings
from kg_rag.store.guard import QueryRefused, check_query

FORMATS = ("json", "csv", "tsv", "xml", "turtle", "ntriples")
def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sparql", help="run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE); "
                                         "the prefixes rdf rdfs xsd skos skosxl ontolex lime vartrans "
                                         "lexicog lexinfo wn prov oa dct dcat void kgr ili are predeclared")
    p.add_argument("query", nargs="?", metavar="QUERY",
                   help="the query text ('-': read it from standard input; or --file)")
    p.add_argument("--file", type=Path, help="read the query from a file ('-' for stdin)")
    p.add_argument("--format", default=None, choices=FORMATS,
                   help="answer format (default json; graphs: turtle or ntriples; json for a graph "
                        "gives turtle)")
    p.add_argument("--json", action="store_true", help="the same as --format json (SPARQL JSON results)")
    p.set_defaults(func=cmd_sparql)


def check_read_only(text: str) -> None:
    """Refuse updates and federated queries (``SERVICE`` would make the process fetch URLs), by
    the tokens of the SPARQL guard (:mod:`kg_rag.store.guard`)."""
    cfg = settings()
    try:
        check_query(text, sys.maxsize, cfg.max_query_depth, cfg.max_query_chain)
    except QueryRefused as e:
        raise QueryError(f"refused: {e}; `kg-rag sparql` only reads") from None
    except QueryError as e:
        if "update" not in str(e):
            raise
        raise QueryError("refused: the query is an update; `kg-rag sparql` only reads "
                         "(load and drop sources with `kg-rag load` / `kg-rag drop-source`)") from None


def cmd_sparql(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.file is None):
        raise InputError("give the query text or --file FILE (one of them)")
    if args.file is not None:
        try:
            text = sys.stdin.read() if str(args.file) == "-" else args.file.read_text(encoding="utf-8")
        except OSError as e:
            raise InputError(f"cannot read the query file {args.file}: {e.strerror or e}") from None
    else:
        text = text_arg(args.query, "query")
    if args.json and args.format not in (None, "json"):
        raise InputError(f"--json and --format {args.format} ask for two formats; give one")
    check_read_only(text)
    with KnowledgeGraph(store_from_args(args)) as kg:
        body, _media = kg.raw_query(text, args.format or "json")  # the standard prefixes predeclared
    out = sys.stdout.buffer
    out.write(body)
    if not body.endswith(b"\n"):
        out.write(b"\n")
    out.flush()
    return 0
