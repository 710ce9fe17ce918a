"""The query guard: refused keywords found by tokens (not substrings), size and nesting caps."""

from __future__ import annotations

import pytest

from kg_rag.errors import QueryError
from kg_rag.service.guard import QueryRefused, QueryTooLarge, add_using, check_query, check_update

MAXB, DEPTH = 100_000, 64


def q(text: str) -> str:
    return check_query(text, MAXB, DEPTH).form


@pytest.mark.parametrize("text", [
    "SELECT * WHERE { SERVICE <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
    "select * where { service <http://127.0.0.1:1/sparql> { ?s ?p ?o } }",
    "SELECT * WHERE { SERVICE SILENT <http://127.0.0.1:1/> { ?s ?p ?o } }",
    "SELECT * WHERE { Service\t?endpoint { ?s ?p ?o } }",
    "PREFIX ex: <http://e/> SELECT * WHERE { SERVICE ex:sparql { ?s ?p ?o } }",
    "SELECT * WHERE { # a comment\n SERVICE <http://e/> { } }",
    "SELECT * WHERE { ?s ?p \"x\" . SERVICE<http://e/>{ } }",
    # the engine reads `1<1)SERVICE?x#>` as `1 < 1 ) SERVICE ?x` and a comment; a pure
    # longest-match tokeniser would see one IRI there
    "SELECT * { BIND(<http://127.0.0.1:1/> AS ?x) FILTER(1<1)SERVICE?x#>\n{ ?s ?p ?o } }",
    # an IRI with an apostrophe may be `<` and a string to the engine: strings are scanned too
    "SELECT * { FILTER(1<'a>') SERVICE <http://127.0.0.1:1/> { } FILTER('b' = 'c') }",
])
def test_service_is_refused(text: str) -> None:
    with pytest.raises(QueryRefused) as e:
        q(text)
    assert e.value.http_status == 403
    assert "SERVICE" in str(e.value)


@pytest.mark.parametrize("text", [
    'SELECT * WHERE { ?s ?p "call SERVICE <http://e/> now" }',
    "SELECT * WHERE { ?s ?p '''SERVICE\n<http://e/>''' }",
    "SELECT * WHERE { ?s ?p ?o } # SERVICE <http://e/> in a comment",
    "SELECT ?service WHERE { ?service ?p ?o }",
    "PREFIX service: <http://e/> SELECT * WHERE { ?s service:load ?o }",
    "SELECT * WHERE { ?s <http://example.org/service> <http://example.org/load/x> }",
    "SELECT * WHERE { ?s ?p ?o FILTER(?o = <http://e/self-service>) }",
    'SELECT * WHERE { ?s ?p "customer service" }',
])
def test_harmless_mentions_pass(text: str) -> None:
    assert q(text) == "SELECT"


@pytest.mark.parametrize("text", [
    "LOAD <http://127.0.0.1:1/data.ttl>",
    "load silent <http://127.0.0.1:1/data.ttl> into graph <http://g>",
    "CLEAR ALL ; LOAD <http://e/x>",
    "INSERT { ?s ?p ?o } WHERE { SERVICE <http://e/> { ?s ?p ?o } }",
])
def test_load_and_service_refused_in_updates(text: str) -> None:
    with pytest.raises(QueryRefused):
        check_update(text, MAXB, DEPTH)


def test_load_in_a_literal_is_data() -> None:
    info = check_update('INSERT DATA { <http://e/s> <http://e/p> "LOAD <http://e/> now" }', MAXB, DEPTH)
    assert info.form == "UPDATE"


def test_forms_and_prologue() -> None:
    assert q("PREFIX a: <http://a/> BASE <http://b/> ASK {}") == "ASK"
    assert q("construct { ?s ?p ?o } where { ?s ?p ?o }") == "CONSTRUCT"
    assert q("DESCRIBE <http://e/>") == "DESCRIBE"
    with pytest.raises(QueryError, match="update"):
        q("INSERT DATA { <http://a> <http://b> <http://c> }")
    with pytest.raises(QueryError, match="malformed"):
        q("HELLO")


def test_depth_limit_counts_real_brackets_only() -> None:
    deep = "SELECT * WHERE " + "{" * 65 + "}" * 65
    with pytest.raises(QueryError, match="nests"):
        q(deep)
    with pytest.raises(QueryError, match="nests"):
        q("SELECT * WHERE { FILTER(" + "(" * 70 + "1" + ")" * 70 + ") }")
    # brackets inside strings and IRIs do not count
    ok = 'SELECT * WHERE { ?s ?p "' + "{" * 500 + '" }'
    assert q(ok) == "SELECT"


def test_size_limit() -> None:
    with pytest.raises(QueryTooLarge) as e:
        check_query("SELECT * WHERE { ?s ?p ?o }" + " " * 200, 100, DEPTH)
    assert e.value.http_status == 413


def test_add_using_inserts_before_where_only_where_allowed() -> None:
    text = ("PREFIX dc: <http://purl.org/dc/terms/>\nCLEAR ALL ;\n"
            "INSERT DATA { <http://a> <http://b> <http://c> } ;\n"
            "INSERT { GRAPH <http://g> { ?s a dc:X } } WHERE { ?s a ?t } ;\n"
            "DELETE WHERE { ?s <http://p> ?o }")
    out = add_using(text, ["<http://d1>"], ["<http://n1>"])
    assert out.count("USING <http://d1> USING NAMED <http://n1> WHERE { ?s a ?t }") == 1
    assert "DELETE WHERE" in out and out.count("USING") == 2
    with pytest.raises(QueryError, match="USING/WITH"):
        add_using("WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", ["<http://d>"], [])
