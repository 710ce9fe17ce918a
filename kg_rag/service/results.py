"""Result formats of the SPARQL endpoint: content negotiation and serialisation with a row cap.

pyoxigraph serialises a whole result or nothing, so solutions are written here (SPARQL 1.1 Query
Results JSON, XML, CSV and TSV) and stop after ``max_rows``; graphs go through
``pyoxigraph.serialize`` on the first ``max_rows`` triples.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pyoxigraph
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from kg_rag.serialize import json_term

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    media_type: str
    kinds: frozenset[str]       # tabular, boolean, graph
    aliases: tuple[str, ...] = ()


FORMATS: tuple[Format, ...] = (
    Format("json", "application/sparql-results+json", frozenset({"tabular", "boolean"}),
           ("application/json",)),
    Format("xml", "application/sparql-results+xml", frozenset({"tabular", "boolean"}),
           ("application/xml", "text/xml")),
    Format("csv", "text/csv", frozenset({"tabular"})),
    Format("tsv", "text/tab-separated-values", frozenset({"tabular"})),
    Format("turtle", "text/turtle", frozenset({"graph"}), ("application/x-turtle",)),
    Format("ntriples", "application/n-triples", frozenset({"graph"}), ("text/plain",)),
    Format("jsonld", "application/ld+json", frozenset({"graph"}), ("application/json",)),
    Format("rdfxml", "application/rdf+xml", frozenset({"graph"}), ("application/xml", "text/xml")),
)
_DEFAULT = {"tabular": "json", "boolean": "json", "graph": "turtle"}
_RDF = {
    "turtle": pyoxigraph.RdfFormat.TURTLE,
    "ntriples": pyoxigraph.RdfFormat.N_TRIPLES,
    "jsonld": pyoxigraph.RdfFormat.JSON_LD,
    "rdfxml": pyoxigraph.RdfFormat.RDF_XML,
}
MAX_RESULT_BYTES = 64 * 1024 * 1024  # a result is cut (and marked truncated) past about this size
KIND_OF_FORM = {"SELECT": "tabular", "ASK": "boolean", "CONSTRUCT": "graph", "DESCRIBE": "graph"}


def _ranges(accept: str) -> list[tuple[float, int, str]]:
    out: list[tuple[float, int, str]] = []
    for i, part in enumerate(accept.split(",")):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        out.append((q, i, media))
    return out


def negotiate(accept: str | None, kind: str, name: str | None = None) -> Format | None:
    """The best format for a result ``kind`` under an Accept header (None: 406).

    ``name`` (a ``format=`` parameter, e.g. ``json`` or a media type) wins over the header.
    A format's quality is the q of the most specific media range that matches it (RFC 9110).
    """
    candidates = [f for f in FORMATS if kind in f.kinds]
    if name:
        return next((f for f in candidates if name in (f.name, f.media_type)), None)
    if not accept or not accept.strip():
        return next(f for f in candidates if f.name == _DEFAULT[kind])
    ranges = _ranges(accept)
    best: tuple[tuple[float, int, int, int, int], Format] | None = None
    for rank, f in enumerate(candidates):
        match: tuple[int, float, int] | None = None  # specificity, q, order
        for q, order, media in ranges:
            if media in (f.media_type, *f.aliases):
                spec = 2
            elif media.endswith("/*") and media != "*/*" and f.media_type.startswith(media[:-1]):
                spec = 1
            elif media == "*/*":
                spec = 0
            else:
                continue
            if match is None or spec > match[0]:
                match = (spec, q, order)
        if match is None or match[1] <= 0:
            continue
        spec, q, order = match
        key = (q, spec, 1 if f.name == _DEFAULT[kind] else 0, -order, -rank)
        if best is None or key > best[0]:
            best = (key, f)
    return best[1] if best else None


# --- solutions ------------------------------------------------------------------------------
def _xml_term(t: Any) -> str:
    if isinstance(t, NamedNode):
        return f"<uri>{escape(t.value)}</uri>"
    if isinstance(t, BlankNode):
        return f"<bnode>{escape(t.value)}</bnode>"
    if isinstance(t, Literal):
        if t.language:
            return f"<literal xml:lang={quoteattr(t.language)}>{escape(t.value)}</literal>"
        if t.datatype.value != XSD_STRING:
            return f"<literal datatype={quoteattr(t.datatype.value)}>{escape(t.value)}</literal>"
        return f"<literal>{escape(t.value)}</literal>"
    if isinstance(t, Triple):
        return (f"<triple><subject>{_xml_term(t.subject)}</subject><predicate>"
                f"{_xml_term(t.predicate)}</predicate><object>{_xml_term(t.object)}</object></triple>")
    raise TypeError(f"not an RDF term: {t!r}")


def _csv_term(t: Any) -> str:
    if t is None:
        return ""
    if isinstance(t, BlankNode):
        return "_:" + t.value
    if isinstance(t, Triple):
        return str(t)
    return str(t.value)


def _csv_row(values: Sequence[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow(values)
    return buf.getvalue()


def _row(variables: Sequence[str], r: Sequence[Any], fmt: str) -> str:
    pairs = [(v, t) for v, t in zip(variables, r, strict=True) if t is not None]
    if fmt == "json":
        return json.dumps({v: json_term(t) for v, t in pairs}, ensure_ascii=False)
    if fmt == "xml":
        return "<result>" + "".join(f"<binding name={quoteattr(v)}>{_xml_term(t)}</binding>"
                                    for v, t in pairs) + "</result>"
    if fmt == "csv":
        return _csv_row([_csv_term(t) for t in r])
    if fmt == "tsv":
        return "\t".join("" if t is None else str(t) for t in r) + "\n"
    raise ValueError(f"no solutions format {fmt!r}")


def write_solutions(variables: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str,
                    max_rows: int, max_bytes: int = MAX_RESULT_BYTES) -> tuple[bytes, bool]:
    """Serialise at most ``max_rows`` rows and about ``max_bytes``; True when rows were left out."""
    body: list[str] = []
    size = 0
    truncated = False
    for i, r in enumerate(rows):
        if i >= max_rows:
            truncated = True
            break
        text = _row(variables, r, fmt)
        size += len(text)
        if size > max_bytes and body:
            truncated = True
            break
        body.append(text)
    if fmt == "json":
        head = json.dumps({"vars": list(variables)}, ensure_ascii=False)
        out = f'{{"head":{head},"results":{{"bindings":[' + ",".join(body) + "]}}"
    elif fmt == "xml":
        out = ('<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">'
               "<head>" + "".join(f"<variable name={quoteattr(v)}/>" for v in variables)
               + "</head><results>\n" + "\n".join(body) + "\n</results></sparql>\n")
    elif fmt == "csv":
        out = _csv_row(list(variables)) + "".join(body)
    else:
        out = "\t".join("?" + v for v in variables) + "\n" + "".join(body)
    return out.encode("utf-8"), truncated


def write_boolean(value: bool, fmt: str) -> bytes:
    if fmt == "json":
        return json.dumps({"head": {}, "boolean": bool(value)}).encode("utf-8")
    if fmt == "xml":
        return ('<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#">'
                f"<head/><boolean>{'true' if value else 'false'}</boolean></sparql>\n").encode()
    raise ValueError(f"no boolean format {fmt!r}")


def write_triples(triples: Iterable[Triple], fmt: str, max_rows: int,
                  max_bytes: int = MAX_RESULT_BYTES) -> tuple[bytes, bool]:
    taken: list[Triple] = []
    size = 0
    truncated = False
    for t in triples:
        size += len(str(t))
        if len(taken) >= max_rows or (size > max_bytes and taken):
            truncated = True
            break
        taken.append(t)
    buf = io.BytesIO()
    pyoxigraph.serialize(taken, buf, _RDF[fmt])
    return buf.getvalue(), truncated


def media_type(fmt: str) -> str:
    f = next(f for f in FORMATS if f.name == fmt)
    charset = "" if f.name in ("json", "jsonld") else "; charset=utf-8"
    return f.media_type + charset
