"""RDF files (Turtle, RDF/XML, N-Triples, N-Quads, TriG, JSON-LD; gzip too) → one source graph.

Protections before the parser sees the bytes: XML with a DTD internal subset or an entity
declaration is refused (entity expansion bombs crash both pyoxigraph and rdflib); JSON-LD remote
``@context`` documents are never fetched (pyoxigraph has no document loader set; the loader says
so clearly). Errors name the file and line.

After parsing: literals are normalised to NFC, blank nodes become skolem IRIs under the source
graph (``<graph>/.well-known/genid/<id>``) so that every node can be bound into a query, and the
SKOS and OntoLex materialisations of :mod:`loaders.skos` and :mod:`loaders.ontolex` are added.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from pathlib import Path
from typing import Any

import pyoxigraph
from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from kg_rag.errors import LoadError
from kg_rag.namespaces import ONTOLEX, SKOS
from kg_rag.store import EmbeddedStore
from kg_rag.text.normalise import base_language
from loaders import ontolex, skos, skos_checks
from loaders.common import Parsed, read_all

log = logging.getLogger(__name__)

SYNTAXES: dict[str, tuple[pyoxigraph.RdfFormat, str]] = {
    "turtle": (pyoxigraph.RdfFormat.TURTLE, "text/turtle"),
    "rdfxml": (pyoxigraph.RdfFormat.RDF_XML, "application/rdf+xml"),
    "ntriples": (pyoxigraph.RdfFormat.N_TRIPLES, "application/n-triples"),
    "nquads": (pyoxigraph.RdfFormat.N_QUADS, "application/n-quads"),
    "trig": (pyoxigraph.RdfFormat.TRIG, "application/trig"),
    "jsonld": (pyoxigraph.RdfFormat.JSON_LD, "application/ld+json"),
}
_EXTENSIONS = {
    ".ttl": "turtle", ".turtle": "turtle", ".n3": "turtle", ".rdf": "rdfxml", ".owl": "rdfxml",
    ".xml": "rdfxml", ".rdfxml": "rdfxml", ".nt": "ntriples", ".ntriples": "ntriples",
    ".nq": "nquads", ".nquads": "nquads", ".trig": "trig", ".jsonld": "jsonld", ".json": "jsonld",
}
# a DOCTYPE with an internal subset, or any entity declaration
_XML_DANGER = re.compile(rb"<!DOCTYPE[^>\[]*\[|<!ENTITY", re.I)
_LABEL_PREDICATES = {SKOS.prefLabel, SKOS.altLabel, SKOS.hiddenLabel, ONTOLEX.writtenRep}


def syntax_from_name(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _EXTENSIONS.get(Path(name).suffix)


def sniff(head: bytes) -> str | None:
    """A guess at the RDF syntax of a file from its first bytes (when the name says nothing)."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<?xml") or text.startswith(b"<rdf:RDF") or text.startswith(b"<!DOCTYPE"):
        return "rdfxml"
    if text[:1] in (b"{", b"["):
        return "jsonld"
    if re.search(rb"^\s*(@prefix|@base|PREFIX|BASE)\b", text, re.M | re.I) or text.startswith(b"<"):
        return "turtle"
    return None


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos) + 1


def check_xml(path: Path, data: bytes) -> None:
    """Refuse XML that declares entities (before any parser expands them)."""
    m = _XML_DANGER.search(data)
    if m:
        raise LoadError(f"{path}:{_line_of(data, m.start())}: refused: the XML declares a DTD "
                        f"internal subset or entities (possible entity expansion bomb); remove "
                        f"the <!DOCTYPE …[…]> block")


def parse_quads(path: Path, data: bytes, syntax: str, base_iri: str | None = None) -> list[Quad]:
    """The statements of ``data`` (the file ``path``) as the engine parses them, relative IRIs
    resolved against ``base_iri`` (default: the file's own URI; :func:`parse` gives the source
    graph's, so that no local path ends up in an IRI); a syntax error is one :class:`LoadError`
    line with its position."""
    rdf_format = SYNTAXES[syntax][0]
    try:
        return list(pyoxigraph.parse(data, rdf_format, base_iri=base_iri or path.as_uri()))
    except SyntaxError as e:
        msg = str(e).splitlines()[0] if str(e) else "syntax error"
        if "LoadDocumentCallback" in msg or "remote context" in msg:
            raise LoadError(f"{path}: refused: the JSON-LD names a remote @context, which kg-rag "
                            f"never fetches; inline the context in the file") from None
        line = f":{e.lineno}" if getattr(e, "lineno", None) else ""
        raise LoadError(f"{path}{line}: not valid {syntax}: {msg}") from None
    except (ValueError, OSError) as e:
        raise LoadError(f"{path}: cannot parse as {syntax}: {e}") from None


def _normalise(quads: list[Quad], graph: NamedNode) -> list[Quad]:
    """Every statement as a triple of the default graph (the store puts them into the source
    graph when writing); literals NFC; blank nodes → skolem IRIs under ``graph``."""
    genid = graph.value + "/.well-known/genid/"
    skolem: dict[str, NamedNode] = {}
    named = 0

    def node(t: Any) -> Any:
        if isinstance(t, BlankNode):
            n = skolem.get(t.value)
            if n is None:
                # numbered in order of appearance: the same file gives the same IRIs
                n = skolem[t.value] = NamedNode(f"{genid}b{len(skolem) + 1}")
            return n
        return t

    out = []
    for q in quads:
        s, o = q.subject, q.object
        if isinstance(o, Literal):
            if not unicodedata.is_normalized("NFC", o.value):
                text = unicodedata.normalize("NFC", o.value)
                o = (Literal(text, language=o.language) if o.language
                     else Literal(text, datatype=o.datatype))
        else:
            o = node(o)
        if not isinstance(q.graph_name, pyoxigraph.DefaultGraph):
            named += 1
        out.append(Quad(node(s), q.predicate, o))
    if named:
        log.info("%d statements of named graphs were put into the source graph %s", named, graph)
    return out


def complete(quads: list[Quad], graph: NamedNode,
             checks: list[str] | None = None) -> tuple[list[Quad], dict[str, int], set[str]]:
    """``quads`` (triples of the default graph) with the SKOS and OntoLex materialisations
    added, each statement once; the counts of concepts, entries, senses and distinct subjects;
    and the base languages of the labels and written forms. Shared by the RDF and DMLex loaders.
    ``checks``: the SKOS integrity warnings (:mod:`loaders.skos_checks`) are appended to it."""
    tmp = EmbeddedStore(":memory:")
    tmp.oxigraph.bulk_extend(quads)
    tmp.oxigraph.bulk_extend(skos.materialise(tmp, graph) + ontolex.materialise(tmp, graph))
    row = tmp.select("select-source-counts")[0]
    counts = {k: int(row[k].value) for k in ("concepts", "entries", "senses")}
    out = list(tmp.oxigraph)  # the scratch store holds each statement once
    languages = {base_language(q.object.language) for q in out
                 if q.predicate in _LABEL_PREDICATES and isinstance(q.object, Literal)
                 and q.object.language}
    counts["entities"] = len({q.subject for q in out})
    if checks is not None:
        checks.extend(skos_checks.warnings(tmp, counts["concepts"], counts["entries"]))
    return out, counts, languages


def parse(path: Path, syntax: str, graph: NamedNode, pipeline: str = "auto") -> Parsed:
    """Parse, normalise and materialise a whole RDF file into quads of ``graph``."""
    # a leading UTF-8 byte-order mark (editors on Windows write one) is no statement: the engine
    # reads it as a subject in Turtle, TriG, N-Triples and N-Quads
    data = read_all(path).removeprefix(b"\xef\xbb\xbf")
    if syntax == "rdfxml" or data[:1024].lstrip().startswith(b"<?xml"):
        check_xml(path, data)
    # relative IRIs resolve under the source's own graph IRI: the same on every machine, and no
    # local path of the loading machine in the store
    quads = _normalise(parse_quads(path, data, syntax, base_iri=graph.value + "/"), graph)
    del data
    checks: list[str] = []
    quads, counts, languages = complete(quads, graph, checks)
    concepts, entries, senses = counts["concepts"], counts["entries"], counts["senses"]
    if pipeline == "ontolex" or (pipeline == "auto" and entries):
        kind = "ontolex"
    elif pipeline == "skos" or concepts:
        kind = "skos"
    else:
        kind = "rdf"
    return Parsed(kind=kind, media_type=SYNTAXES[syntax][1], quads=quads, triples=len(quads),
                  concepts=concepts, entries=entries, senses=senses, entities=counts["entities"],
                  languages=languages, warnings=checks)
