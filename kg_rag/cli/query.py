"""``sparql``: run a read-only SPARQL query against the store and print the answer."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import store_from_args, text_arg
from kg_rag.errors import InputError, QueryError

FORMATS = ("json", "csv", "tsv", "xml", "turtle", "ntriples")
# IRIs, strings (long and short) and comments: removed before looking for update keywords
_NOT_CODE = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|<[^<>"{}|^`\\\s]*>|#[^\n]*'
)
# keywords, not variables (?load), prefixed names (ex:drop) or prefixes (copy:)
_FORBIDDEN = re.compile(
    r"(?<![?$:\w.-])(INSERT|DELETE|LOAD|CLEAR|DROP|CREATE|ADD|MOVE|COPY|SERVICE)(?![\w:.-])", re.I
)


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
    """Refuse updates and federated queries (``SERVICE`` would make the process fetch URLs)."""
    m = _FORBIDDEN.search(_NOT_CODE.sub(" ", text))
    if m:
        word = m.group(1).upper()
        what = "a federated query (SERVICE)" if word == "SERVICE" else f"an update ({word})"
        raise QueryError(f"refused: the query is {what}; `kg-rag sparql` only reads "
                         f"(load and drop sources with `kg-rag load` / `kg-rag drop-source`)")


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
