"""Load lexicons through the Python API (used while ``kg-rag load`` does not exist).

    python -m bench.work_load STORE FILE...

``KnowledgeGraph.open(STORE).load(FILES)`` — what the CLI command calls. Prints the seconds.
"""

from __future__ import annotations

import json
import sys
import time

from kg_rag.api import KnowledgeGraph


def main(argv: list[str]) -> int:
    store, *files = argv
    t0 = time.perf_counter()
    with KnowledgeGraph.open(path=store) as kg:
        reports = kg.load(files)
    print(json.dumps({"seconds": time.perf_counter() - t0, "files": len(reports)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
