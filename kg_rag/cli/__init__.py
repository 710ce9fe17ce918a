"""``kg-rag`` command line: thin commands over :mod:`kg_rag.api`.

Each command group is a module of this package with ``register(subparsers)``; errors of the
:mod:`kg_rag.errors` hierarchy become one clean line on stderr and the error's exit code.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from collections.abc import Sequence

from kg_rag.cli.common import set_quiet
from kg_rag.errors import ConfigError, InputError, KgRagError

# command modules, in help order (each adds its subcommands)
COMMAND_MODULES: tuple[str, ...] = ("load", "align", "query", "documents", "redecide", "questions", "ask", "demo", "evaluate", "serve")


#: a module of an optional dependency → the extra that installs it
EXTRAS: dict[str, str] = {
    "uvicorn": "service", "starlette": "service", "multipart": "service",
    "python_multipart": "service", "httpx": "service", "anyio": "service",
    "openai": "llm", "langchain_core": "langchain", "pydantic": "langchain",
    "bm25s": "eval", "matplotlib": "eval", "wn": "eval", "flashtext": "eval",
    "pyshacl": "dev",
}


def missing_module(e: ModuleNotFoundError) -> str:
    """One line for a missing module: which extra installs it (kg-rag is installed from its
    source folder; there is no package index to name)."""
    name = (e.name or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return (f"the module {name or e} is missing: reinstall kg-rag from its source folder "
                f"(pip install .)")
    return (f"this needs {name}, part of the '{extra}' extra: install it from the kg-rag source "
            f"folder with pip install '.[{extra}]'")


def build_parser(prog: str = "kg-rag") -> argparse.ArgumentParser:
    from kg_rag import __version__

    p = argparse.ArgumentParser(
        prog=prog,
        description="Knowledge-graph retrieval with explainable word-sense selection.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--store", metavar="PATH",
                       help="embedded store folder (default: $KG_RAG_STORE or the user data dir; "
                            ":memory: for a one-off run)")
    where.add_argument("--endpoint", metavar="URL", help="remote SPARQL 1.1 query endpoint")
    p.add_argument("--update-endpoint", metavar="URL", help="remote SPARQL update endpoint")
    p.add_argument("--token", metavar="TOKEN",
                   help="Bearer token for a remote endpoint's updates, e.g. a kg-rag service's "
                        "(default: $KG_RAG_SERVICE_TOKEN)")
    talk = p.add_mutually_exclusive_group()
    talk.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="no progress bars and no warnings: only results and errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return p


def not_utf8(argv: Sequence[str]) -> str | None:
    """The message for the first argument that is not UTF-8 text (Python carries its bytes as
    lone surrogates, which every later step would fail on), None when all are."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            try:  # the bytes as given, the undecodable ones escaped
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            except UnicodeEncodeError:
                shown = arg.encode("utf-8", "backslashreplace").decode("utf-8")
            # one line, nothing a terminal acts on: controls and bidi controls escaped as well
            shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                            for c in shown)
            if len(shown) > 60:
                shown = shown[:57] + "..."
            return (f"the command-line argument '{shown}' is not UTF-8 text; give every "
                    f"argument in UTF-8")
    return None


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the command is — so that a write under way is undone and the
    store closed as after Ctrl-C (a stop, not an error of the command)."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None, prog: str = "kg-rag") -> int:
    parser = build_parser(prog)
    argv = sys.argv[1:] if argv is None else list(argv)
    bad = not_utf8(argv)
    if bad is not None:  # a usage error before any command runs, whichever argument it is
        print(f"kg-rag: error: {bad}", file=sys.stderr)
        return InputError.exit_code
    args = parser.parse_args(argv)
    set_quiet(args.quiet)
    logging.basicConfig(
        level=logging.ERROR if args.quiet else logging.WARNING - 10 * min(args.verbose, 2),
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:   # (``serve`` puts its own handler above this one while it serves)
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:   # not the main thread (main called from a program's thread): left as is
        previous = None
    try:
        code = args.func(args)
        return int(code or 0)
    except KgRagError as e:
        print(f"kg-rag: error: {e}", file=sys.stderr)
        return e.exit_code
    except ModuleNotFoundError as e:  # an optional dependency that is not installed
        if args.verbose > 1:
            raise
        print(f"kg-rag: error: {missing_module(e)}", file=sys.stderr)
        return ConfigError.exit_code
    except KeyboardInterrupt as e:
        if isinstance(e, Terminated):
            print("kg-rag: terminated", file=sys.stderr)
            return 128 + signal.SIGTERM
        print("kg-rag: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
