"""Dump the largest named graph of a store as N-Triples (the peer's input for the same triples).

    python -m bench.work_dump STORE OUT.nt

Prints ``{"graph": IRI, "triples": N, "graphs": {iri: n}}``.
"""

from __future__ import annotations

import json
import sys

import pyoxigraph


def main(argv: list[str]) -> int:
    store_path, out = argv
    store = pyoxigraph.Store.read_only(store_path)
    counts: dict[str, int] = {}
    for g in store.named_graphs():
        n = 0
        for _ in store.quads_for_pattern(None, None, None, g):
            n += 1
        counts[g.value] = n
    if not counts:
        raise SystemExit(f"{store_path}: no named graph to dump")
    graph = max(counts, key=lambda k: counts[k])
    with open(out, "wb") as f:
        store.dump(f, pyoxigraph.RdfFormat.N_TRIPLES, from_graph=pyoxigraph.NamedNode(graph))
    print(json.dumps({"graph": graph, "triples": counts[graph], "graphs": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
