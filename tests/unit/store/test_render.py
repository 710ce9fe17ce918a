"""The one place where RDF terms become SPARQL text (kg_rag.store.render)."""

from __future__ import annotations

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Triple

from kg_rag.errors import QueryError
from kg_rag.namespaces import XSD
from kg_rag.store import Change
from kg_rag.store.render import Values, check_quads, quads_block, term, values_block

A, B = NamedNode("urn:kgr-test:a"), NamedNode("urn:kgr-test:b")
G = NamedNode("urn:kgr-test:g")


def test_terms_render_as_ntriples() -> None:
    assert term(A) == "<urn:kgr-test:a>"
    assert term(Literal("x", language="he")) == '"x"@he'
    assert term(Literal("1", datatype=XSD.integer)) == '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert term(Literal('a"b\\c\nd')) == '"a\\"b\\\\c\\nd"'


@pytest.mark.parametrize("value", ["text", 1, 1.5, None, b"bytes", ("urn:a",)])
def test_plain_python_values_are_refused(value: object) -> None:
    with pytest.raises(QueryError, match="only RDF term objects"):
        term(value)


def test_blank_nodes_and_triples_are_refused() -> None:
    with pytest.raises(QueryError, match="blank nodes"):
        term(BlankNode())
    with pytest.raises(QueryError):
        term(Triple(A, B, A))


def test_values_block() -> None:
    v = Values(("s", "o"), [(A, Literal("x")), (None, Literal("y", language="en"))])
    assert values_block(v) == 'VALUES (?s ?o) {\n(<urn:kgr-test:a> "x")\n(UNDEF "y"@en)\n}'
    assert values_block(Values((), [])) == ""
    assert values_block(Values.column("o", [])) == "VALUES (?o) {\n\n}"
    assert Values.one({"b": B, "a": A}) == Values(("a", "b"), [(A, B)])


def test_values_row_length_is_checked() -> None:
    with pytest.raises(QueryError, match="wrong number"):
        values_block(Values(("s", "o"), [(A,)]))


def test_quads_block_groups_by_graph() -> None:
    text = quads_block([Quad(A, B, A, G), Quad(B, B, B, DefaultGraph()), Quad(B, A, B, G)])
    assert text == ("GRAPH <urn:kgr-test:g> {\n<urn:kgr-test:a> <urn:kgr-test:b> <urn:kgr-test:a> .\n"
                    "<urn:kgr-test:b> <urn:kgr-test:a> <urn:kgr-test:b> .\n}\n"
                    "<urn:kgr-test:b> <urn:kgr-test:b> <urn:kgr-test:b> .")
    with pytest.raises(QueryError, match="mint an IRI"):
        quads_block([Quad(BlankNode(), B, A, G)])


def test_change_renders_one_update() -> None:
    c = Change(drop_graphs=[G], delete=[Quad(A, B, A, G)], insert=[Quad(A, B, Literal("n"), G)])
    text = c.render()
    assert text.startswith("DROP SILENT GRAPH <urn:kgr-test:g> ;\nDELETE DATA {")
    assert text.count(" ;\n") == 2 and text.endswith("}")
    assert not Change() and Change().render() == ""
    s = pyoxigraph.Store()
    s.update(text)
    assert list(s) == [Quad(A, B, Literal("n"), G)]


hostile = st.lists(st.sampled_from(list("\"'\\{}#<>@^?$;.\n\r\t ab") + ["\u05d1\u05bc", "\u202e", "\U0001F600", "\"\"\""]),
                  max_size=20).map("".join)


@settings(max_examples=60, deadline=None)
@given(value=hostile, lang=st.sampled_from([None, "en", "he"]))
def test_rendered_values_round_trip_through_the_engine(value: str, lang: str | None) -> None:
    lit = Literal(value, language=lang) if lang else Literal(value)
    q = "SELECT ?o WHERE {\n" + values_block(Values.column("o", [lit])) + "\n}"
    rows = list(pyoxigraph.Store().query(q))
    assert len(rows) == 1 and rows[0]["o"] == lit


@pytest.mark.parametrize("bad", [
    Quad(BlankNode(), B, A, G),                   # blank subject
    Quad(A, B, BlankNode(), G),                   # blank object
    Quad(A, B, Triple(A, B, A), G),               # a quoted triple
    Quad(A, B, A, BlankNode()),                   # blank graph name
    Quad(BlankNode(), B, BlankNode(), BlankNode()),   # several: the first one quads_block meets
])
def test_check_quads_refuses_what_quads_block_refuses(bad: Quad) -> None:
    with pytest.raises(QueryError) as rendered:
        quads_block([Quad(A, B, A, G), bad])
    with pytest.raises(QueryError) as checked:
        check_quads([Quad(A, B, A, G), bad])
    assert str(checked.value) == str(rendered.value)


def test_check_quads_accepts_what_quads_block_renders() -> None:
    good = [Quad(A, B, Literal("x", language="he"), G), Quad(A, B, B, DefaultGraph()),
            Quad(A, B, Literal("1", datatype=XSD.integer), G)]
    check_quads(good)
    assert quads_block(good)
