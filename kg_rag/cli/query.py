"""``sparql``: run a read-only SPARQL query against the store and print the answer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import store_from_args, text_arg
from kg_rag.errors import InputError, QueryError
from kg_rag.settings import settings
from kg_rag.store.guard import QueryInfo, QueryRefused, check_query

FORMATS = ("json", "csv", "tsv", "xml", "turtle", "ntriples")
#: the formats that fit the answer of each query form; json fits every form (for a graph it
#: gives turtle, as the help says)
_RESULTS, _GRAPHS = ("json", "csv", "tsv", "xml"), ("turtle", "ntriples")
FITTING = {"SELECT": _RESULTS, "ASK": _RESULTS, "CONSTRUCT": _GRAPHS, "DESCRIBE": _GRAPHS}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sparql", help="run a read-only SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE); "
                                         "the prefixes rdf rdfs xsd skos skosxl ontolex lime vartrans "
                                         "lexicog lexinfo wn prov oa dct dcat void kgr ili are predeclared")
    p.add_argument("query", nargs="?", metavar="QUERY",
                   help="the query text ('-': read it from standard input; or --file)")
    p.add_argument("--file", type=Path, help="read the query from a file ('-' for stdin)")
    p.add_argument("--format", default=None, choices=FORMATS,
                   help="answer format (default json; graphs: turtle or ntriples; json for a graph "
                        "gives turtle; one that does not fit the query is refused)")
    p.add_argument("--json", action="store_true", help="the same as --format json (SPARQL JSON results)")
    p.set_defaults(func=cmd_sparql)


def check_read_only(text: str) -> QueryInfo:
    """Refuse updates and federated queries (``SERVICE`` would make the process fetch URLs), by
    the tokens of the SPARQL guard (:mod:`kg_rag.store.guard`); what the guard read of it."""
    cfg = settings()
    try:
        return check_query(text, sys.maxsize, cfg.max_query_depth, cfg.max_query_chain)
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
        text = query_file(args.file)
    else:
        text = text_arg(args.query, "query")
    if args.json and args.format not in (None, "json"):
        raise InputError(f"--json and --format {args.format} ask for two formats; give one")
    form = check_read_only(text).form
    fitting = FITTING.get(form, FORMATS)
    if args.format not in (None, "json", *fitting):
        raise InputError(f"--format {args.format} does not fit a {form} query: give "
                         f"{', '.join(fitting[:-1])} or {fitting[-1]}")
    with KnowledgeGraph(store_from_args(args)) as kg:
        body, _media = kg.raw_query(text, args.format or "json")  # the standard prefixes predeclared
    out = sys.stdout.buffer
    out.write(body)
    if not body.endswith(b"\n"):
        out.write(b"\n")
    out.flush()
    return 0


def query_file(path: Path) -> str:
    """The text of ``--file`` (``-``: standard input): UTF-8, a leading byte-order mark dropped;
    an InputError for a file that cannot be read or is not UTF-8."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the query file {path}: {e.strerror or e}") from None
    where = "the query on standard input" if str(path) == "-" else f"the query file {path}"
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise InputError(f"{where} is not UTF-8 text (byte {e.start}); convert it to UTF-8") from None
