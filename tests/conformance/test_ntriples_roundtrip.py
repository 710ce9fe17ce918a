"""A graph survives N-Triples between pyoxigraph (the store's engine) and rdflib (the RDF/XML and
JSON-LD side of the loaders), both ways (issue 22, conformance): random graphs of IRIs (with
non-ASCII and escaped characters), blank nodes, plain, language-tagged (Hebrew, Arabic, subtags)
and datatyped literals, strings with quotes, backslashes, control characters and characters
outside the BMP. Compared as graphs up to blank-node renaming (rdflib's isomorphism)."""

from __future__ import annotations

import io
import logging

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib.compare import to_isomorphic

# ill-typed lexical forms ("x"^^xsd:date) are legal RDF: rdflib warns when it cannot convert them
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
logging.getLogger("rdflib.term").setLevel(logging.ERROR)

# text a literal may hold: every code point but surrogates (not encodable in UTF-8); NFC is the
# store's rule for texts it annotates, not for what RDF can carry, so anything goes here
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
# IRI characters: letters and digits of any script (Hebrew, Arabic, CJK …) and the unreserved
# marks; noncharacters and private use are not IRI characters at all
_IRI_CHARS = st.one_of(st.characters(categories=("Lu", "Ll", "Lo", "Nd"), max_codepoint=0xFFEF),
                       st.sampled_from(list("-._~!$&'()*+,;=:@")))
_IRI = st.builds(lambda a, b: f"http://example.org/{a}#{b}",
                 st.text(_IRI_CHARS, max_size=8), st.text(_IRI_CHARS, max_size=8)).map(
    lambda s: s.replace(" ", "%20"))
_LANG = st.sampled_from(["en", "he", "ar", "fr", "en-GB", "zh-Hant-TW", "de-CH-1996"])
_DT = st.sampled_from(["http://www.w3.org/2001/XMLSchema#integer", "http://www.w3.org/2001/XMLSchema#date",
                       "http://example.org/dt/custom", "http://www.w3.org/2001/XMLSchema#boolean"])
_BNODE = st.integers(0, 4).map(lambda i: f"b{i}")


@st.composite
def _graph(draw: st.DrawFn) -> list[tuple[tuple[str, str], str, tuple[str, ...]]]:
    triples = []
    for _ in range(draw(st.integers(1, 12))):
        s = draw(st.one_of(_IRI.map(lambda i: ("iri", i)), _BNODE.map(lambda b: ("bnode", b))))
        p = draw(_IRI)
        kind = draw(st.sampled_from(["iri", "bnode", "plain", "lang", "typed", "he", "ar"]))
        if kind == "iri":
            o: tuple[str, ...] = ("iri", draw(_IRI))
        elif kind == "bnode":
            o = ("bnode", draw(_BNODE))
        elif kind == "plain":
            o = ("lit", draw(_TEXT))
        elif kind == "lang":
            o = ("lang", draw(_TEXT), draw(_LANG))
        elif kind == "he":
            o = ("lang", "הַפֵּרוֹת " + draw(_TEXT) + " עַל הַבַּדִּים", "he")
        elif kind == "ar":
            o = ("lang", "محمية " + draw(_TEXT), "ar")
        else:
            o = ("typed", draw(st.text(st.characters(exclude_categories=("Cs",)), max_size=6)), draw(_DT))
        triples.append((s, p, o))
    return triples


def _ox(term: tuple[str, ...]) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    kind = term[0]
    if kind == "iri":
        return ox.NamedNode(term[1])
    if kind == "bnode":
        return ox.BlankNode(term[1])
    if kind == "lit":
        return ox.Literal(term[1])
    if kind == "lang":
        return ox.Literal(term[1], language=term[2])
    return ox.Literal(term[1], datatype=ox.NamedNode(term[2]))


def _rdflib_graph(nt: str) -> rdflib.Graph:
    g = rdflib.Graph()
    g.parse(data=nt, format="nt")
    return g


def _expected(triples: list[tuple[tuple[str, str], str, tuple[str, ...]]]) -> rdflib.Graph:
    """The graph built directly as rdflib terms (no serialiser involved)."""
    def term(t: tuple[str, ...]) -> rdflib.term.Node:
        if t[0] == "iri":
            return rdflib.URIRef(t[1])
        if t[0] == "bnode":
            return rdflib.BNode(t[1])
        if t[0] == "lit":
            return rdflib.Literal(t[1])
        if t[0] == "lang":
            # language tags are case-insensitive (BCP 47); pyoxigraph writes them in lower case
            return rdflib.Literal(t[1], lang=t[2].lower())
        return rdflib.Literal(t[1], datatype=rdflib.URIRef(t[2]))

    g = rdflib.Graph()
    for s, p, o in triples:
        g.add((term(s), rdflib.URIRef(p), term(o)))
    return g


def _same(a: rdflib.Graph, b: rdflib.Graph) -> bool:
    # lexical forms compared as written: rdflib normalises some typed literals when it *parses*
    # (e.g. "01"^^xsd:integer stays "01" as lexical form, but equality is by value): compare the
    # canonical N-Triples of isomorphic copies, term by term, lexically
    def rows(g: rdflib.Graph) -> set[tuple[str, str, str, str]]:
        out = set()
        for s, p, o in to_isomorphic(g):
            lex = "_" if isinstance(o, rdflib.BNode) else str(o)
            extra = (o.language or "") + "|" + str(o.datatype or "") if isinstance(o, rdflib.Literal) else type(o).__name__
            out.add((s.n3() if not isinstance(s, rdflib.BNode) else "_", str(p), lex, extra))
        return out

    return to_isomorphic(a) == to_isomorphic(b) and rows(a) == rows(b) if len(a) == len(b) else False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_graph())
def test_pyoxigraph_to_rdflib_and_back(triples: list[tuple[tuple[str, str], str, tuple[str, ...]]]) -> None:
    quads = [ox.Triple(_ox(s), ox.NamedNode(p), _ox(o)) for s, p, o in triples]
    nt = ox.serialize(quads, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    g = _rdflib_graph(nt)
    assert _same(g, _expected(triples)), (nt, triples)
    back = g.serialize(format="nt", encoding="utf-8")
    again = list(ox.parse(io.BytesIO(back), format=ox.RdfFormat.N_TRIPLES))
    nt2 = ox.serialize(again, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    assert _same(_rdflib_graph(nt2), _expected(triples)), (nt, back)


def test_escapes_that_broke_serialisers_elsewhere() -> None:
    """Fixed cases beside the random ones: controls, quotes, backslashes, astral characters,
    a bidi-heavy Hebrew/Arabic mix, and an IRI with non-ASCII characters."""
    triples = [
        (("iri", "http://example.org/s"), "http://example.org/p", ("lit", 'a "quoted" \\ back\nline\t\x00\x7f')),
        (("iri", "http://example.org/s"), "http://example.org/p", ("lang", "𝔘𝔫𝔦 🐓 כרסה بين", "he")),
        (("iri", "http://example.org/שׁ/ע"), "http://example.org/p", ("iri", "http://example.org/محمية")),
        (("bnode", "x"), "http://example.org/p", ("typed", "01", "http://www.w3.org/2001/XMLSchema#integer")),
    ]
    quads = [ox.Triple(_ox(s), ox.NamedNode(p), _ox(o)) for s, p, o in triples]
    nt = ox.serialize(quads, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")
    g = _rdflib_graph(nt)
    assert _same(g, _expected(triples))
    back = g.serialize(format="nt", encoding="utf-8")
    again = list(ox.parse(io.BytesIO(back), format=ox.RdfFormat.N_TRIPLES))
    assert len(again) == len(triples)
    assert _same(_rdflib_graph(ox.serialize(again, format=ox.RdfFormat.N_TRIPLES).decode("utf-8")),
                 _expected(triples))
