"""``python -m kg_rag``: the ``kg-rag`` command line (for when the script is not on PATH)."""

from __future__ import annotations

import sys

from kg_rag.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="kg-rag"))
