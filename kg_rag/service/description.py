"""The SPARQL 1.1 Service Description of ``/sparql`` (answered to a GET without a query)."""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode, Triple

from kg_rag.service.results import FORMATS
from kg_rag.store.prologue import PREDECLARED

SD = "http://www.w3.org/ns/sparql-service-description#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
FORMAT_IRIS = {
    "json": "http://www.w3.org/ns/formats/SPARQL_Results_JSON",
    "xml": "http://www.w3.org/ns/formats/SPARQL_Results_XML",
    "csv": "http://www.w3.org/ns/formats/SPARQL_Results_CSV",
    "tsv": "http://www.w3.org/ns/formats/SPARQL_Results_TSV",
    "turtle": "http://www.w3.org/ns/formats/Turtle",
    "ntriples": "http://www.w3.org/ns/formats/N-Triples",
    "jsonld": "http://www.w3.org/ns/formats/JSON-LD",
    "rdfxml": "http://www.w3.org/ns/formats/RDF_XML",
}


def service_description(endpoint: str, updates: bool, max_rows: int, timeout: float,
                        union_default: bool = False) -> list[Triple]:
    """``union_default``: a query that names no dataset (no ``default-graph-uri``,
    ``named-graph-uri`` or ``FROM``) sees the union of the named graphs as its default graph."""
    s = NamedNode(endpoint + "#service")

    def sd(local: str) -> NamedNode:
        return NamedNode(SD + local)

    out = [Triple(s, RDF_TYPE, sd("Service")),
           Triple(s, sd("endpoint"), NamedNode(endpoint)),
           Triple(s, sd("supportedLanguage"), sd("SPARQL11Query")),
           Triple(s, NamedNode("http://www.w3.org/2000/01/rdf-schema#comment"), Literal(
               f"kg-rag knowledge graph; read-only unless enabled; at most {max_rows} rows and "
               f"{timeout:g} s per query; SERVICE and LOAD are refused"))]
    if updates:
        out.append(Triple(s, sd("supportedLanguage"), sd("SPARQL11Update")))
    if union_default:
        out.append(Triple(s, sd("feature"), sd("UnionDefaultGraph")))
    prefixes = " ".join(PREDECLARED)
    out.append(Triple(s, NamedNode("http://www.w3.org/2000/01/rdf-schema#comment"), Literal(
        f"predeclared prefixes: {prefixes}" + (
            "; a query that names no dataset (default-graph-uri, named-graph-uri, FROM) sees "
            "the union of the named graphs as its default graph" if union_default else ""))))
    out += [Triple(s, sd("resultFormat"), NamedNode(FORMAT_IRIS[f.name])) for f in FORMATS]
    return out
