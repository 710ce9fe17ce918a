"""WordNet sense frequencies (``cntlist.rev``: ``sense_key sense_number tag_count`` a line) → RDF.

Each line with a count above 0 becomes one record, keyed by the sense key and not by a sense
IRI, so the counts do not depend on which lexicon (or edition) is loaded, nor on the order
of loading; a query joins them to the senses that carry the same ``kgr:senseKey``::

    [] a kgr:SenseFrequency ; kgr:countedSenseKey "bank%1:17:01::" ; kgr:senseCount 25 .

The counts are the tag counts of the semantic concordances (SemCor and the Brown corpus) behind
WordNet 3.0's sense order.
"""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from kg_rag.errors import LoadError
from kg_rag.namespaces import KGR, RDF, XSD
from loaders.common import Parsed, read_all


def is_cntlist(path: Path) -> bool:
    """Is ``path`` named like a WordNet sense-frequency list (``cntlist.rev``, ``*-cntlist.rev``)?"""
    return path.name.endswith("cntlist.rev")


def read(path: Path) -> dict[str, int]:
    """sense key → tag count (lines with a count of 0 are left out); a malformed line is a
    :class:`LoadError` naming it."""
    out: dict[str, int] = {}
    for no, line in enumerate(read_all(path).decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3 or "%" not in parts[0] or not parts[2].isdigit():
            raise LoadError(f"{path}:{no}: expected 'sense_key sense_number tag_count', got {line!r}")
        n = int(parts[2])
        if n > 0:
            out[parts[0]] = out.get(parts[0], 0) + n
    return out


def parse(path: Path, graph: NamedNode) -> Parsed:
    counts = read(path)
    quads: list[Quad] = []
    kind_of, cls, key_p, count_p = RDF.type, KGR.SenseFrequency, KGR.countedSenseKey, KGR.senseCount
    for key, n in counts.items():
        b = BlankNode()
        quads += [Quad(b, kind_of, cls, graph), Quad(b, key_p, Literal(key), graph),
                  Quad(b, count_p, Literal(str(n), datatype=XSD.integer), graph)]
    return Parsed(kind="sense-counts", media_type="text/plain", quads=quads, triples=len(quads))
