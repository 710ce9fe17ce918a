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
    # counted by the engine (iterating millions of quads in Python takes minutes)
    for sol in store.query("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"):
        counts[sol["g"].value] = int(sol["n"].value)
    if not counts:
        raise SystemExit(f"{store_path}: no named graph to dump")
    graph = max(counts, key=lambda k: counts[k])
    with open(out, "wb") as f:
        store.dump(f, pyoxigraph.RdfFormat.N_TRIPLES, from_graph=pyoxigraph.NamedNode(graph))
    print(json.dumps({"graph": graph, "triples": counts[graph], "graphs": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
