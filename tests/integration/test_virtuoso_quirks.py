"""Each Virtuoso 7.2 quirk that kg_rag/store/virtuoso.py handles, on a real Virtuoso.

Every test first shows the quirk through the standard dialect (what kg-rag would do without
the handling: the test's second half fails then), then the Virtuoso dialect's answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.errors import QueryError, StoreError
from kg_rag.store import Change, RemoteStore, Values
from kg_rag.store.dialect import STANDARD
from kg_rag.store.virtuoso import SYSTEM_GRAPHS, VirtuosoDialect
from tests.support import virtuoso_server

EX = "urn:kgr-virt:"
G1, G2 = NamedNode(EX + "g1"), NamedNode(EX + "g2")
LABEL = NamedNode("http://www.w3.org/2004/02/skos/core#prefLabel")
FLAG = NamedNode(EX + "flag")
A, B, C = NamedNode(EX + "a"), NamedNode(EX + "b"), NamedNode(EX + "c")
BRANCH_EN = Literal("branch", language="en")
BAD_HE = Literal("בד", language="he")
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.fixture
def url(virtuoso_url: str) -> Iterator[str]:
    virtuoso_server.clear(virtuoso_url)
    RemoteStore(virtuoso_url, dialect=VirtuosoDialect()).apply(Change(insert=[
        Quad(A, LABEL, BRANCH_EN, G1), Quad(B, LABEL, BAD_HE, G1), Quad(C, LABEL, BRANCH_EN, G2)]))
    yield virtuoso_url
    virtuoso_server.clear(virtuoso_url)


def _pair(url: str) -> tuple[RemoteStore, RemoteStore]:
    """(without the handling, with it)"""
    return RemoteStore(url, dialect=STANDARD), RemoteStore(url, dialect=VirtuosoDialect())


def _rows(body: bytes) -> list[dict[str, object]]:
    return list(json.loads(body)["results"]["bindings"])


def test_the_dialect_is_chosen_from_the_server_header(url: str, oxigraph_url: str) -> None:
    assert RemoteStore(url).dialect.name == "virtuoso"
    assert RemoteStore(oxigraph_url).dialect.name == "standard"


def test_default_graph_is_not_the_union_of_all_graphs(url: str) -> None:
    plain, virt = _pair(url)
    query = "ASK { ?s ?p ?o }"
    assert json.loads(plain.raw_query(query, "json")[0])["boolean"] is True   # the quirk
    assert json.loads(virt.raw_query(query, "json")[0])["boolean"] is False   # like SPARQL 1.1
    assert virt.ask("ask-skos-mappings") is False       # a default-graph query file
    # what kg-rag writes to the default graph is what it reads there
    virt.apply(Change(insert=[Quad(A, LABEL, Literal("default"))]))
    body, _ = virt.raw_query("SELECT ?o WHERE { ?s ?p ?o }", "json")
    assert [r["o"]["value"] for r in _rows(body)] == ["default"]          # type: ignore[index]


def test_concat_on_hebrew_is_refused_not_garbled(url: str) -> None:
    plain, virt = _pair(url)
    query = ('SELECT ?x WHERE { GRAPH ?g { ?s ?p ?o FILTER(LANG(?o) = "he") } '
             'BIND(CONCAT(?o, "ש") AS ?x) }')
    got = _rows(plain.raw_query(query, "json")[0])[0]["x"]["value"]        # type: ignore[index]
    assert got != "בדש" and "\u00d7" in got                                # mojibake: the quirk
    with pytest.raises(StoreError, match="garbles CONCAT"):
        virt.raw_query(query, "json")
    # ASCII query text concatenates fine and is not refused
    body, _ = virt.raw_query('SELECT ?x WHERE { GRAPH ?g { ?s ?p ?o FILTER(LANG(?o) = "he") } '
                             'BIND(CONCAT(?o, "-x") AS ?x) }', "json")
    assert _rows(body)[0]["x"]["value"] == "בד-x"                          # type: ignore[index]


def test_plain_and_xsd_string_literals_are_one_term(url: str) -> None:
    plain, virt = _pair(url)
    typed = f'INSERT DATA {{ GRAPH <{G1.value}> {{ <{A.value}> <{LABEL.value}> "y"^^<{XSD}string> }} }}'
    plain.user_update(typed)
    assert plain.ask("ask-statement", bind={"s": A, "o": Literal("y")}) is False   # the quirk
    virtuoso_server.clear(url)
    virt.user_update(typed)
    assert virt.ask("ask-statement", bind={"s": A, "o": Literal("y")}) is True
    body, _ = virt.raw_query(f'ASK {{ GRAPH ?g {{ ?s ?p "y"^^<{XSD}string> }} }}', "json")
    assert json.loads(body)["boolean"] is True


def test_booleans_come_back_as_booleans(url: str) -> None:
    plain, virt = _pair(url)
    virt.apply(Change(insert=[Quad(A, FLAG, Literal(True), G1)]))
    q = "select-subjects-by-literal"
    assert plain.select(q, bind={"p": FLAG})[0]["o"] == Literal("1", datatype=NamedNode(XSD + "boolean"))
    assert virt.select(q, bind={"p": FLAG})[0]["o"] == Literal(True)
    body, _ = virt.raw_query(f"SELECT ?o WHERE {{ GRAPH ?g {{ ?s <{FLAG.value}> ?o }} }}", "json")
    assert _rows(body)[0]["o"]["value"] == "true"                          # type: ignore[index]
    # computed booleans come back as xsd:integer 1 unless sent as a typed boolean
    computed = (f"SELECT (isIRI(?s) AS ?b) ?c WHERE {{ GRAPH <{G1.value}> {{ ?s ?p ?o }} "
                'BIND(LANG(?o) = "he" AS ?c) } ORDER BY ?s ?o')
    raw = _rows(plain.raw_query(computed, "json")[0])[0]["b"]
    assert (raw["value"], raw["datatype"]) == ("1", XSD + "integer")       # type: ignore[index]
    got = _rows(virt.raw_query(computed, "json")[0])
    assert got[0]["b"] == {"type": "literal", "value": "true", "datatype": XSD + "boolean"}
    assert sorted(r["c"]["value"] for r in got) == ["false", "false", "true"]  # type: ignore[index]


def test_a_change_of_5000_quads_is_sent_in_parts(url: str) -> None:
    plain, virt = _pair(url)
    g = NamedNode(EX + "big")
    quads = [Quad(NamedNode(f"{EX}s{i}"), LABEL, Literal(f"v{i}"), g) for i in range(5000)]
    with pytest.raises((StoreError, QueryError)):
        plain.apply(Change(insert=quads))                                  # the quirk
    virt.apply(Change(insert=quads))
    body, _ = virt.raw_query(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{g.value}> {{ ?s ?p ?o }} }}",
                             "json")
    assert _rows(body)[0]["n"]["value"] == "5000"                          # type: ignore[index]


def test_values_of_several_variables_keep_language_tags(url: str) -> None:
    plain, virt = _pair(url)
    # two varying columns (?p differs in the last row), a language-tagged literal
    values = Values(("p", "o"), [(LABEL, BRANCH_EN), (LABEL, BAD_HE), (FLAG, Literal("z"))])
    q = "select-subjects-by-literal"
    assert len(plain.select(q, values=values)) < 3                         # the quirk
    assert {r["s"] for r in virt.select(q, values=values)} == {A, B, C}
    both = virt.select(q, bind={"p": LABEL}, values=Values.column("o", [BRANCH_EN, BAD_HE]))
    assert {r["s"] for r in both} == {A, B, C}


def test_graph_names_and_system_graphs(url: str) -> None:
    plain, virt = _pair(url)
    assert plain.named_graphs() == []              # GRAPH ?g { } lists nothing: the quirk
    assert virt.named_graphs() == [G1, G2]         # and none of Virtuoso's own graphs
    rows = plain.select("select-subjects-by-literal")
    assert {r["g"].value for r in rows} & SYSTEM_GRAPHS                    # the quirk
    assert {r["g"] for r in virt.select("select-subjects-by-literal")} == {G1, G2}


def test_datetime_fractions_are_canonical(url: str) -> None:
    plain, virt = _pair(url)
    when = Literal("2026-01-01T10:05:00.13Z", datatype=NamedNode(XSD + "dateTime"))
    virt.apply(Change(insert=[Quad(A, FLAG, when, G1)]))
    assert plain.select("select-subjects-by-literal", bind={"p": FLAG})[0]["o"].value.endswith(".130Z")
    assert virt.select("select-subjects-by-literal", bind={"p": FLAG})[0]["o"] == when


def test_a_failed_change_says_it_may_be_partly_applied(url: str) -> None:
    virt = RemoteStore(url, dialect=VirtuosoDialect())
    with pytest.raises(StoreError, match="may hold part of this change"):
        VirtuosoDialect().apply(virt.execute_update, _Failing(insert=[Quad(A, FLAG, Literal("x"), G1)]))


class _Failing(Change):
    def render(self) -> str:
        return super().render() + f" ;\nDROP GRAPH <{EX}never-created>"


def test_a_users_update_with_its_own_prefix_lines_passes_the_predeclared_prologue(url: str) -> None:
    """A user's update goes behind the predeclared prefixes' prologue: Virtuoso takes an update
    that declares a predeclared name again (the same IRI, or its own), and one that declares
    none."""
    _, virt = _pair(url)
    skos = "http://www.w3.org/2004/02/skos/core#"
    virt.user_update(f'PREFIX skos: <{skos}> INSERT DATA {{ GRAPH <{G1.value}> {{ <{A.value}> skos:prefLabel "a" }} }}')
    virt.user_update(f'INSERT DATA {{ GRAPH <{G1.value}> {{ <{A.value}> skos:altLabel "b" }} }}')
    virt.user_update(f'PREFIX skos: <urn:mine#> INSERT DATA {{ GRAPH <{G1.value}> {{ <{A.value}> skos:x "c" }} }}')
    body, _ = virt.raw_query(f"SELECT DISTINCT ?p WHERE {{ GRAPH <{G1.value}> {{ <{A.value}> ?p ?o }} }} ORDER BY ?p",
                             "json")
    got = [r["p"]["value"] for r in _rows(body)]  # type: ignore[index]
    assert got == [
        f"{skos}altLabel", f"{skos}prefLabel", "urn:mine#x"], got
