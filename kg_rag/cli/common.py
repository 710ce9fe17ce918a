"""Helpers shared by CLI commands: opening the store, parsing ``--wsd``, printing JSON,
progress bars."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kg_rag import InputError, Store, WsdMode, open_store

#: the help text of every ``--wsd`` option
WSD_HELP = f"sense selection: {WsdMode.names()} (default: KG_RAG_WSD, else knowledge)"


def store_from_args(args: argparse.Namespace, read_only: bool = False) -> Store:
    return open_store(path=args.store, endpoint=args.endpoint, update_endpoint=args.update_endpoint,
                      read_only=read_only)


def wsd_arg(value: str) -> WsdMode:
    """``--wsd``: a :class:`WsdMode` (a typo ends the command with exit code 2, naming them)."""
    try:
        return WsdMode.parse(value)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def progress_enabled() -> bool:
    return sys.stderr.isatty()
