"""The catalog of loaded sources: one record per source graph in ``…/id/graph/catalog``.

A record says where a source came from (file, checksum, format, kind), when it was loaded, how
big it is and which languages it carries (ontology/DATA-MODEL.md, "Catalog").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timezone

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.errors import InputError, KgRagError, NotFoundError
from kg_rag.namespaces import DCAT, DCT, ID, KGR, PROV, RDF, VOID, XSD
from kg_rag.store import Change, Store

log = logging.getLogger(__name__)

CATALOG_GRAPH = NamedNode(ID + "graph/catalog")


@dataclass(frozen=True, slots=True)
class SourceRecord:
    graph: str                 # IRI of the source's named graph
    title: str                 # file name
    source: str                # the file's name (never its folder: the catalog is public on a served store)
    kind: str                  # skos | ontolex | wn-lmf | rdf
    media_type: str
    sha256: str
    loaded_at: str             # xsd:dateTime lexical form
    triples: int
    entities: int
    languages: tuple[str, ...]
    mapping: int = 1           # version of the loader's mapping of this kind (1: not recorded)


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def record_quads(rec: SourceRecord) -> list[Quad]:
    g = NamedNode(rec.graph)
    c = CATALOG_GRAPH
    quads = [
        Quad(g, RDF.type, DCAT.Dataset, c),
        Quad(g, RDF.type, VOID.Dataset, c),
        Quad(g, DCT.term("title"), Literal(rec.title), c),
        Quad(g, DCT.source, Literal(rec.source), c),
        Quad(g, KGR.sourceKind, Literal(rec.kind), c),
        Quad(g, DCT.term("format"), Literal(rec.media_type), c),
        Quad(g, KGR.sha256, Literal(rec.sha256), c),
        Quad(g, PROV.generatedAtTime, Literal(rec.loaded_at, datatype=XSD.dateTime), c),
        Quad(g, VOID.triples, Literal(rec.triples), c),
        Quad(g, VOID.entities, Literal(rec.entities), c),
        Quad(g, KGR.mappingVersion, Literal(rec.mapping), c),
    ]
    quads += [Quad(g, DCT.language, Literal(lang), c) for lang in rec.languages]
    return quads


def _current(store: Store, graph: NamedNode) -> list[Quad]:
    rows = store.select("select-catalog-record", bind={"g": graph})
    return [Quad(graph, r["p"], r["o"], CATALOG_GRAPH) for r in rows]


def write_record(store: Store, rec: SourceRecord) -> None:
    """Replace the record of ``rec.graph`` in one update."""
    g = NamedNode(rec.graph)
    store.apply(Change(delete=_current(store, g), insert=record_quads(rec)))


def drop_source(store: Store, graph: str) -> None:
    """Remove a source: its named graph and its catalog record, in one update."""
    g = NamedNode(graph)
    record = _current(store, g)
    if not record:  # documents, decisions and the catalog itself are not sources
        raise NotFoundError(f"no loaded source {graph} in the catalog; `kg-rag sources` lists them")
    store.apply(Change(drop_graphs=[g], delete=record))
    log.info("dropped source %s", graph)


def resolve_source(store: Store, name: str,
                   missing: type[KgRagError] = InputError) -> SourceRecord:
    """The loaded source ``name`` names: its graph IRI (``<…>`` or bare), its file name
    (``lexicon.ttl``, as ``kg-rag sources`` lists it) or that name without its suffixes
    (``lexicon``). InputError when it is empty or several match; ``missing`` when none does
    (NotFoundError for a source to act on, as an unknown graph IRI is)."""
    want = name.strip()
    if want.startswith("<") and want.endswith(">"):
        want = want[1:-1]
    if not want:
        raise InputError("the source name is empty; `kg-rag sources` lists the loaded sources")
    records = list_sources(store)
    for rec in records:
        if rec.graph == want:
            return rec
    found = [r for r in records if want in (r.title, r.title.split(".", 1)[0])]
    if len(found) == 1:
        return found[0]
    if found:
        raise InputError(f"{len(found)} loaded sources are named {name!r} "
                         f"({', '.join(r.graph for r in found)}); give the graph IRI")
    raise missing(f"no loaded source {name!r} (graph IRI or file name); "
                  f"`kg-rag sources` lists them")


def list_sources(store: Store) -> list[SourceRecord]:
    """Every source in the catalog, by graph IRI."""
    by_graph: dict[str, dict[str, object]] = {}
    for r in store.select("select-sources"):
        g = r["g"].value
        rec = by_graph.setdefault(g, {"languages": []})
        for key in ("title", "source", "kind", "format", "sha", "time", "triples", "entities", "mapping"):
            if key in r:
                rec[key] = r[key].value
        if "lang" in r and r["lang"].value not in rec["languages"]:  # type: ignore[operator]
            rec["languages"].append(r["lang"].value)  # type: ignore[attr-defined]
    out = []
    for g, rec in by_graph.items():
        out.append(SourceRecord(
            graph=g, title=str(rec.get("title", "")), source=str(rec.get("source", "")),
            kind=str(rec.get("kind", "")), media_type=str(rec.get("format", "")),
            sha256=str(rec.get("sha", "")), loaded_at=str(rec.get("time", "")),
            triples=int(str(rec.get("triples", 0))), entities=int(str(rec.get("entities", 0))),
            languages=tuple(rec["languages"]),  # type: ignore[arg-type]
            mapping=int(str(rec.get("mapping", 1))),
        ))
    return out
