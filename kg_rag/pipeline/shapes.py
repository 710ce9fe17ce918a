"""Check what kg-rag wrote against ``ontology/shapes.ttl`` (SHACL, via pySHACL).

Only the graphs kg-rag writes are checked — the catalog, the decisions graph, every document
graph and every question graph — merged into one data graph (an annotation in a document graph
points at a decision in the decisions graph). Loaded sources are not checked.

pySHACL is a development dependency (``pip install 'kg-rag[dev]'``); it is imported lazily.
It is meant for tests and small stores: about 1 ms per triple (the demo store, ~5,000 triples
of kg-rag graphs, takes ~5 s).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import rdflib
from pyoxigraph import NamedNode

from kg_rag.errors import ConfigError
from kg_rag.namespaces import DECISIONS_GRAPH, ID, PREFIXES
from kg_rag.resources import resource_path
from kg_rag.store.render import Values

if TYPE_CHECKING:
    from kg_rag.store.base import Store

log = logging.getLogger(__name__)

CATALOG_GRAPH = NamedNode(ID + "graph/catalog")
SHAPES_NS = "https://w3id.org/kg-rag/shapes#"
_SHORT = {SHAPES_NS: "kgrsh:", "http://www.w3.org/ns/shacl#": "sh:",
          **{iri: f"{p}:" for p, iri in PREFIXES.items()}}


@dataclass(frozen=True, slots=True)
class ShapeReport:
    conforms: bool
    text: str                   # pySHACL's report text
    failed: frozenset[str]      # names of the shapes/constraints that failed, e.g. kgrsh:Decision-status


def _pyshacl() -> Any:
    try:
        import pyshacl
    except ImportError:
        raise ConfigError("SHACL validation needs pyshacl: pip install 'kg-rag[dev]'") from None
    return pyshacl


@lru_cache(maxsize=1)
def shapes_graph() -> rdflib.Graph:
    """ontology/shapes.ttl, parsed once."""
    g = rdflib.Graph()
    g.parse(str(resource_path("ontology") / "shapes.ttl"), format="turtle")
    return g


def kg_rag_graphs(store: Store) -> list[NamedNode]:
    """The named graphs kg-rag writes: catalog, decisions, alignments, documents, questions."""
    doc, question = ID + "doc/", ID + "question/"
    alignments = NamedNode(ID + "graph/alignments")
    return [g for g in store.named_graphs()
            if g in (CATALOG_GRAPH, DECISIONS_GRAPH, alignments) or g.value.startswith((doc, question))]


def store_data_graph(store: Store) -> rdflib.Graph:
    """kg-rag's graphs of ``store`` merged into one rdflib graph."""
    data = rdflib.Graph()
    graphs = kg_rag_graphs(store)
    if graphs:
        triples = store.construct("construct-graph", values=Values.column("g", graphs))
        data.parse(data="".join(f"{t} .\n" for t in triples), format="nt")
    return data


def _short(iri: str) -> str:
    for ns, prefix in _SHORT.items():
        if iri.startswith(ns):
            return prefix + iri[len(ns):]
    return f"<{iri}>"


def _result_names(report: rdflib.Graph, shapes: rdflib.Graph) -> frozenset[str]:
    """A name per failed constraint: its IRI, or ``<node shape IRI>|<path>`` for unnamed ones."""
    SH = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    names = set()
    for result in report.subjects(rdflib.RDF.type, SH.ValidationResult):
        constraint = report.value(result, SH.sourceConstraint)
        shape = report.value(result, SH.sourceShape)
        if isinstance(constraint, rdflib.URIRef):
            names.add(_short(str(constraint)))
        elif isinstance(shape, rdflib.URIRef):
            names.add(_short(str(shape)))
        else:
            parent = shapes.value(None, SH.property, shape)
            path = shapes.value(shape, SH.path)
            names.add(f"{_short(str(parent)) if parent is not None else '?'}|"
                      f"{_short(str(path)) if path is not None else '?'}")
    return frozenset(names)


@lru_cache(maxsize=256)
def _prepared(text: str) -> Any:
    from rdflib.plugins.sparql import prepareQuery

    return prepareQuery(text)


def _query_caching_graph(data: rdflib.Graph) -> rdflib.Graph:
    """A copy of ``data`` that parses each SPARQL text once.

    pySHACL runs a SHACL-SPARQL constraint once per focus node with the same text (``$this`` is
    pre-bound); rdflib's parser takes ~0.1 s a query, which would dominate validation.
    """
    class CachingGraph(rdflib.Graph):
        def query(self, query_object: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(query_object, str) and not kwargs.get("initNs"):
                query_object = _prepared(query_object)
            return super().query(query_object, *args, **kwargs)

    g = CachingGraph()
    for t in data:
        g.add(t)
    return g


def validate_graph(data: rdflib.Graph) -> ShapeReport:
    """Validate one merged data graph against the shapes."""
    pyshacl = _pyshacl()
    shapes = shapes_graph()
    conforms, report, text = pyshacl.validate(_query_caching_graph(data), shacl_graph=shapes,
                                              inplace=True, allow_warnings=False)
    failed = frozenset() if conforms else _result_names(report, shapes)
    if not conforms:
        log.info("SHACL: %d constraint(s) failed: %s", len(failed), ", ".join(sorted(failed)))
    return ShapeReport(bool(conforms), str(text), failed)


def validate(store: Store) -> tuple[bool, str]:
    """Whether kg-rag's graphs in ``store`` conform to ontology/shapes.ttl, and the report text."""
    report = validate_graph(store_data_graph(store))
    return report.conforms, report.text


__all__ = ["ShapeReport", "kg_rag_graphs", "shapes_graph", "store_data_graph", "validate",
           "validate_graph"]
