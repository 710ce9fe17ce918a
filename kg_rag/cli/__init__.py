"""``kg-rag`` command line: thin commands over :mod:`kg_rag.api`.

Each command group is a module of this package with ``register(subparsers)``; errors of the
:mod:`kg_rag.errors` hierarchy become one clean line on stderr and the error's exit code.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from kg_rag.errors import KgRagError

# command modules, in help order (each adds its subcommands)
COMMAND_MODULES: tuple[str, ...] = ("load", "align", "query", "documents", "questions", "ask", "demo", "evaluate", "serve")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kg-rag",
        description="Knowledge-graph retrieval with explainable word-sense selection.",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", metavar="PATH",
                       help="embedded store folder (default: $KG_RAG_STORE or the user data dir; "
                            ":memory: for a one-off run)")
    where.add_argument("--endpoint", metavar="URL", help="remote SPARQL 1.1 query endpoint")
    p.add_argument("--update-endpoint", metavar="URL", help="remote SPARQL update endpoint")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING - 10 * min(args.verbose, 2),
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code = args.func(args)
        return int(code or 0)
    except KgRagError as e:
        print(f"kg-rag: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("kg-rag: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
