"""Helpers shared by CLI commands: opening the store, parsing ``--wsd``, printing JSON,
progress bars."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kg_rag import InputError, Store, WsdMode, open_store
from kg_rag.settings import settings

#: the help text of every ``--wsd`` option
WSD_HELP = f"sense selection: {WsdMode.names()} (default: KG_RAG_WSD, else knowledge)"


def store_from_args(args: argparse.Namespace, read_only: bool = False, create: bool = False) -> Store:
    """The store of ``--store``/``--endpoint`` (else the settings'); only a command that makes
    one (``create``: load, demo, index, serve) turns a path that does not exist into a new store."""
    return open_store(path=args.store, endpoint=args.endpoint, update_endpoint=args.update_endpoint,
                      read_only=read_only, token=getattr(args, "token", None), create=create)


def makes_store(args: argparse.Namespace) -> bool:
    """True when :func:`store_from_args` (``create``) would make a new store folder: an embedded
    store at a path that does not exist yet. A command reads its input before then, so input it
    refuses leaves no folder behind."""
    cfg = settings()
    if args.endpoint or (not args.store and cfg.endpoint):
        return False
    where = args.store or cfg.store
    return bool(where) and where != ":memory:" and not Path(where).exists()


def wsd_arg(value: str) -> WsdMode:
    """``--wsd``: a :class:`WsdMode` (a typo ends the command with exit code 2, naming them)."""
    try:
        return WsdMode.parse(value)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 document``, ``2 documents`` (``many``: an irregular plural, e.g. entries)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def text_arg(value: str, what: str) -> str:
    """A text argument, or standard input for ``-`` (as ``kg-rag ask -`` < question.txt)."""
    if value != "-":
        return value
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"the {what} on standard input is not UTF-8 text") from None
    return text.removeprefix("\ufeff").rstrip("\r\n")


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


_QUIET = [False]


def set_quiet(quiet: bool) -> None:
    """``kg-rag --quiet``: no progress bars (and, set by :func:`kg_rag.cli.main`, no warnings)."""
    _QUIET[0] = quiet


def progress_enabled() -> bool:
    """Progress bars on standard error: when it is a terminal and ``--quiet`` was not given."""
    return sys.stderr.isatty() and not _QUIET[0]
