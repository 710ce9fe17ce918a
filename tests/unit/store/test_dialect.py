"""The dialects' text work, without a server (the engines themselves: test_virtuoso_quirks.py)."""

from __future__ import annotations

import pytest
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from kg_rag.errors import ConfigError, StoreError
from kg_rag.store import Change, Values
from kg_rag.store.dialect import STANDARD, by_name, from_server_header
from kg_rag.store.virtuoso import DEFAULT_GRAPH, MAX_UNION_ROWS, MAX_UPDATE_QUADS, VirtuosoDialect

V = VirtuosoDialect()
A, P = NamedNode("urn:a"), NamedNode("urn:p")
EN = Literal("branch", language="en")


def test_dialects_by_name_and_server_header() -> None:
    assert by_name("auto") is None and by_name("standard") is STANDARD
    assert by_name(" Virtuoso ").name == "virtuoso"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="KG_RAG_ENDPOINT_DIALECT"):
        by_name("qlever")
    assert from_server_header("Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu").name == "virtuoso"
    assert from_server_header("").name == from_server_header("Oxigraph/0.5").name == "standard"


def test_xsd_string_is_dropped_in_code_only() -> None:
    text = ('SELECT * WHERE { ?s ?p "a"^^xsd:string, "b"^^<http://www.w3.org/2001/XMLSchema#string>, '
            '"c^^xsd:string", "d"^^xsd:stringy } # "e"^^xsd:string')
    out = V.update_text(text)
    assert '"a",' in out and '"b" ,' not in out and '"b",' in out
    assert '"c^^xsd:string"' in out and '"d"^^xsd:stringy' in out and '# "e"^^xsd:string' in out


def test_default_graph_queries_get_a_from() -> None:
    assert V.read_query("ASK { ?s ?p ?o }") == f"ASK FROM <{DEFAULT_GRAPH}>\n{{ ?s ?p ?o }}"
    assert f"FROM <{DEFAULT_GRAPH}>\nWHERE" in V.read_query("SELECT ?s WHERE { ?s ?p ?o }")
    for text in ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", "SELECT * FROM <urn:g> WHERE { ?s ?p ?o }",
                 "SELECT * WHERE { GRAPH <urn:g> { ?s ?p ?o } } # no FROM here"):
        assert DEFAULT_GRAPH not in V.read_query(text)
    listed = V.read_query("SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")
    assert "GRAPH ?g { ?kgr_gs ?kgr_gp ?kgr_go }" in listed


def test_concat_with_non_ascii_text_is_refused() -> None:
    with pytest.raises(StoreError, match="garbles CONCAT"):
        V.read_query('SELECT (CONCAT(?o, "ש") AS ?x) WHERE { GRAPH ?g { ?s ?p ?o } }')
    V.read_query('SELECT (CONCAT(?o, "-") AS ?x) WHERE { GRAPH ?g { ?s ?p ?o } }')   # ASCII text
    V.read_query('SELECT ?o WHERE { GRAPH ?g { ?s ?p "ש" } }')                       # no CONCAT


def test_values_keep_language_tags() -> None:
    # a constant column (bind=) gets its own block, the varying one stays a plain block
    text = V.values_text(Values(("p", "o"), [(P, EN), (P, Literal("x"))]))
    assert text.count("VALUES") == 2 and "UNION" not in text
    # two varying columns with a language tag: a UNION of one-row blocks
    rows = [(A, EN), (P, Literal("y", language="de"))]
    text = V.values_text(Values(("s", "o"), rows))
    assert text.count("UNION") == 1 and text.count("VALUES") == 2
    assert STANDARD.values_text(Values(("s", "o"), rows)).count("VALUES") == 1
    with pytest.raises(StoreError, match="at most"):
        V.values_text(Values(("s", "o"), [(NamedNode(f"urn:s{i}"), Literal(f"w{i}", language="en"))
                                       for i in range(MAX_UNION_ROWS + 1)]))


def test_changes_are_chunked_and_default_graph_quads_mapped() -> None:
    big = [Quad(NamedNode(f"urn:s{i}"), P, Literal(str(i)), NamedNode("urn:g")) for i in range(1200)]
    parts = V.update_requests(Change(drop_graphs=[NamedNode("urn:old")], insert=big))
    assert len(parts) == 1 + -(-1200 // MAX_UPDATE_QUADS) and parts[0].startswith("DROP SILENT GRAPH")
    one = V.update_requests(Change(insert=[Quad(A, P, EN, DefaultGraph())]))
    assert len(one) == 1 and f"GRAPH <{DEFAULT_GRAPH}>" in one[0]
    assert STANDARD.update_requests(Change(insert=big)) == [Change(insert=big).render()]


def test_terms_are_repaired() -> None:
    xsd = "http://www.w3.org/2001/XMLSchema#"
    assert V.term(Literal("1", datatype=NamedNode(xsd + "boolean"))) == Literal(True)
    assert V.term(Literal("0", datatype=NamedNode(xsd + "boolean"))) == Literal(False)
    dt = NamedNode(xsd + "dateTime")
    assert V.term(Literal("2026-01-01T10:05:00.130Z", datatype=dt)).value == "2026-01-01T10:05:00.13Z"
    assert V.term(Literal("2026-01-01T10:05:00.000+02:00", datatype=dt)).value == "2026-01-01T10:05:00+02:00"
    assert V.term(EN) == EN and STANDARD.term(Literal("1", datatype=NamedNode(xsd + "boolean"))).value == "1"


def test_boolean_expressions_are_sent_as_typed_booleans() -> None:
    out = V.read_query('SELECT (STRSTARTS(?o, "a") AS ?b) (STRLEN(?o) AS ?n) (?n > 2 && BOUND(?x) AS ?c) '
                       'WHERE { GRAPH ?g { ?s ?p ?o } BIND(IF(?x, 1, 2) AS ?w) BIND(?a = ?b AS ?e) }')
    assert out.count("STRDT(IF(") == 3
    assert "(STRLEN(?o) AS ?n)" in out and "BIND(IF(?x, 1, 2) AS ?w)" in out
