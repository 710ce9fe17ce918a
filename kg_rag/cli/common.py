"""Helpers shared by CLI commands: opening the store, printing JSON, progress bars."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kg_rag.store import Store, open_store


def store_from_args(args: argparse.Namespace) -> Store:
    return open_store(path=args.store, endpoint=args.endpoint, update_endpoint=args.update_endpoint)


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


def progress_enabled() -> bool:
    return sys.stderr.isatty()
