"""One suite over the stores: the embedded Oxigraph store, a real ``oxigraph serve`` and a real
Virtuoso 7.2 (both remote through :class:`RemoteStore`).

Every test runs on each; the ``both`` tests also compare each remote answer with the embedded one.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Triple

from kg_rag.errors import QueryError, StoreError
from kg_rag.store import Change, EmbeddedStore, RemoteStore, Store, Values
from kg_rag.store.base import GRAPH_FORMATS, RESULT_FORMATS
from tests.support import virtuoso_server
from tests.support.oxigraph_server import clear

EX = "urn:kgr-test:"
G1, G2 = NamedNode(EX + "g1"), NamedNode(EX + "g2")
LABEL = NamedNode("http://www.w3.org/2004/02/skos/core#prefLabel")
A, B, C = NamedNode(EX + "a"), NamedNode(EX + "b"), NamedNode(EX + "c")
BRANCH_EN = Literal("branch", language="en")
BAD_HE = Literal("בד", language="he")
PLAIN = Literal('quote " and } and # and \n newline')

DATA = [
    Quad(A, LABEL, BRANCH_EN, G1),
    Quad(B, LABEL, BAD_HE, G1),
    Quad(C, LABEL, PLAIN, G1),
    Quad(C, LABEL, BRANCH_EN, G2),
]


def _make(kind: str, request: pytest.FixtureRequest) -> Store:
    if kind == "embedded":
        return EmbeddedStore(":memory:")
    if kind == "virtuoso":
        url = request.getfixturevalue("virtuoso_url")
        virtuoso_server.clear(url)
        return RemoteStore(url, timeout=30)
    url = request.getfixturevalue("oxigraph_url")
    clear(url)
    return RemoteStore(url, timeout=10)


@pytest.fixture(params=["embedded", "remote", "virtuoso"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    s = _make(request.param, request)
    s.apply(Change(insert=list(DATA)))
    yield s
    s.close()


@pytest.fixture(params=["remote", "virtuoso"])
def both(request: pytest.FixtureRequest) -> Iterator[tuple[Store, Store]]:
    pair = (_make("embedded", request), _make(request.param, request))
    for s in pair:
        s.apply(Change(insert=list(DATA)))
    yield pair
    for s in pair:
        s.close()


def _subjects(rows: list[dict[str, object]]) -> list[tuple[str, str]]:
    return sorted((r["g"].value, r["s"].value) for r in rows)  # type: ignore[attr-defined]


def _quads(s: Store) -> set[tuple[str, str, str, str]]:
    rows = s.select("select-subjects-by-literal")
    return {(str(r["g"]), str(r["s"]), str(r["p"]), str(r["o"])) for r in rows}


# --- reads -------------------------------------------------------------------------------------

def test_select_with_bind(store: Store) -> None:
    rows = store.select("select-subjects-by-literal", bind={"o": BRANCH_EN})
    assert _subjects(rows) == [(G1.value, A.value), (G2.value, C.value)]
    assert all(r["o"] == BRANCH_EN and r["p"] == LABEL for r in rows)
    # a literal differing only in its language tag is another literal
    assert store.select("select-subjects-by-literal", bind={"o": Literal("branch", language="de")}) == []
    assert store.select("select-subjects-by-literal", bind={"o": Literal("branch")}) == []


def test_select_with_multirow_values(store: Store) -> None:
    rows = store.select("select-subjects-by-literal",
                        values=Values(("o",), [(BAD_HE,), (PLAIN,), (Literal("absent"),)]))
    assert _subjects(rows) == [(G1.value, B.value), (G1.value, C.value)]


def test_select_with_bind_and_values(store: Store) -> None:
    rows = store.select("select-subjects-by-literal", bind={"p": LABEL},
                        values=Values.column("o", [BRANCH_EN, BAD_HE]))
    assert _subjects(rows) == [(G1.value, A.value), (G1.value, B.value), (G2.value, C.value)]


def test_unknown_input_is_refused(store: Store) -> None:
    with pytest.raises(QueryError, match="does not take"):
        store.select("select-subjects-by-literal", bind={"nope": A})
    with pytest.raises(QueryError, match="only RDF term objects"):
        store.select("select-subjects-by-literal", bind={"o": "branch"})  # type: ignore[dict-item]


def test_ask(store: Store) -> None:
    assert store.ask("ask-statement", bind={"s": A, "p": LABEL, "o": BRANCH_EN, "g": G1}) is True
    assert store.ask("ask-statement", bind={"s": A, "p": LABEL, "o": BRANCH_EN, "g": G2}) is False
    assert store.ask("ask-statement", values=Values(("s", "o"), [(A, BAD_HE), (B, BAD_HE)])) is True
    assert store.ask("ask-statement", values=Values(("s", "o"), [(A, BAD_HE)])) is False


def test_construct(store: Store) -> None:
    triples = store.construct("construct-graph", bind={"g": G1})
    assert set(triples) == {Triple(q.subject, q.predicate, q.object) for q in DATA if q.graph_name == G1}
    both = store.construct("construct-graph", values=Values.column("g", [G1, G2]))
    assert set(both) == {Triple(q.subject, q.predicate, q.object) for q in DATA}
    assert store.construct("construct-graph", bind={"g": NamedNode(EX + "absent")}) == []


def test_query_kind_is_checked(store: Store) -> None:
    with pytest.raises(QueryError, match="a query"):
        store.run_update("select-subjects-by-literal")


# --- writes ------------------------------------------------------------------------------------

class _FailingChange(Change):
    """A Change whose update has a last operation that fails on every SPARQL 1.1 store."""

    def render(self) -> str:
        return super().render() + f" ;\nDROP GRAPH <{EX}never-created>"


def test_apply_is_atomic(store: Store) -> None:
    before = _quads(store)
    bad = _FailingChange(drop_graphs=[G2], delete=[DATA[0]],
                         insert=[Quad(A, LABEL, Literal("new"), G1)])
    with pytest.raises(StoreError) as failed:
        store.apply(bad)
    if isinstance(store, RemoteStore) and not store.dialect.atomic:
        # Virtuoso keeps the operations before the failing one: the error says so, and applying
        # the change again (below) completes it
        assert "may hold part of this change" in str(failed.value)
    else:
        assert _quads(store) == before       # not the drop, not the delete, not the insert
    good = Change(drop_graphs=[G2], delete=[DATA[0]], insert=[Quad(A, LABEL, Literal("new"), G1)])
    store.apply(good)
    after = _quads(store)
    assert (str(G1), str(A), str(LABEL), str(Literal("new"))) in after
    assert not any(g == str(G2) for g, *_ in after)
    assert len(after) == 3


def test_apply_nothing_is_a_no_op(store: Store) -> None:
    store.apply(Change())
    assert len(_quads(store)) == len(DATA)


def test_change_refuses_blank_nodes(store: Store) -> None:
    with pytest.raises(QueryError, match="blank nodes"):
        store.apply(Change(insert=[Quad(BlankNode(), LABEL, PLAIN, G1)]))


def test_malformed_update_is_a_query_error(store: Store) -> None:
    with pytest.raises(QueryError):
        store.execute_update("INSERT DATA { <urn:a> <urn:b> }")


def test_load_graph_replaces(store: Store) -> None:
    g = NamedNode(EX + "loaded")
    first = [Quad(A, LABEL, Literal(f"v{i}"), g) for i in range(5)]
    assert store.load_graph(g, first) == 5
    seen: list[int] = []
    second = [Quad(B, LABEL, Literal("w"), G1), Quad(BlankNode(), LABEL, Literal("bn"))]
    assert store.load_graph(g, iter(second), progress=seen.append) == 2   # graph names ignored
    assert sum(seen) == 2
    got = store.construct("construct-graph", bind={"g": g})
    assert {(t.predicate, t.object) for t in got} == {(LABEL, Literal("w")), (LABEL, Literal("bn"))}
    assert any(isinstance(t.subject, BlankNode) for t in got)
    # other graphs are untouched
    assert len(store.construct("construct-graph", bind={"g": G1})) == 3


def test_load_graph_empty_leaves_empty_graph(store: Store) -> None:
    store.load_graph(G1, [])
    assert store.construct("construct-graph", bind={"g": G1}) == []


def test_drop_graph_and_named_graphs(store: Store) -> None:
    assert set(store.named_graphs()) == {G1, G2}
    store.drop_graph(G2)
    assert store.named_graphs() == [G1]
    store.drop_graph(NamedNode(EX + "absent"))     # silent
    assert store.named_graphs() == [G1]
    assert len(store.construct("construct-graph", bind={"g": G1})) == 3


# --- raw queries -------------------------------------------------------------------------------

# the test's own graphs: a user's CONSTRUCT over GRAPH ?g also sees Virtuoso's system graphs
# (kg-rag's named queries drop their rows: kg_rag/store/virtuoso.py)
SELECT_ALL = "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?g ?s ?o"
CONSTRUCT_ALL = ('CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } '
                 'FILTER(STRSTARTS(STR(?g), "urn:kgr-test:")) }')
RESULT_MEDIA = {
    "json": "application/sparql-results+json", "xml": "application/sparql-results+xml",
    "csv": "text/csv", "tsv": "text/tab-separated-values",
}
GRAPH_MEDIA = {
    "turtle": "text/turtle", "ntriples": "application/n-triples",
    "nquads": "application/n-quads", "jsonld": "application/ld+json",
    "rdfxml": "application/rdf+xml",
}
PARSE = {
    "turtle": pyoxigraph.RdfFormat.TURTLE, "ntriples": pyoxigraph.RdfFormat.N_TRIPLES,
    "nquads": pyoxigraph.RdfFormat.N_QUADS, "jsonld": pyoxigraph.RdfFormat.JSON_LD,
    "rdfxml": pyoxigraph.RdfFormat.RDF_XML,
}


@pytest.mark.parametrize("fmt", RESULT_FORMATS)
def test_raw_select_every_format(store: Store, fmt: str) -> None:
    body, media = store.raw_query(SELECT_ALL, fmt)
    assert media == RESULT_MEDIA[fmt]
    if fmt == "csv":   # lossy, pyoxigraph does not parse it back
        lines = body.decode("utf-8").split("\r\n")
        assert lines[0] == "g,s,o" and lines[1].startswith(f"{G1.value},{A.value},")
        assert body.count(G1.value.encode()) + body.count(G2.value.encode()) == len(DATA)
        return
    res = pyoxigraph.parse_query_results(io.BytesIO(body), getattr(pyoxigraph.QueryResultsFormat, fmt.upper()))
    rows = [(s["g"], s["s"], s["o"]) for s in res]
    assert sorted(rows, key=str) == sorted(((q.graph_name, q.subject, q.object) for q in DATA), key=str)


@pytest.mark.parametrize("fmt", GRAPH_FORMATS)
def test_raw_construct_every_format(store: Store, fmt: str) -> None:
    body, media = store.raw_query(CONSTRUCT_ALL, fmt)
    assert media == GRAPH_MEDIA[fmt]
    got = {q.triple for q in pyoxigraph.parse(body, PARSE[fmt])}
    assert got == {Triple(q.subject, q.predicate, q.object) for q in DATA}


@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_raw_ask(store: Store, fmt: str) -> None:
    body, media = store.raw_query(f"ASK {{ GRAPH ?g {{ ?s ?p {BAD_HE} }} }}", fmt)
    assert media == RESULT_MEDIA[fmt]
    assert bool(pyoxigraph.parse_query_results(io.BytesIO(body), getattr(pyoxigraph.QueryResultsFormat, fmt.upper())))


def test_raw_format_fallback(store: Store) -> None:
    body, media = store.raw_query(SELECT_ALL, "turtle")
    assert media == "application/sparql-results+json"
    assert len(json.loads(body)["results"]["bindings"]) == len(DATA)
    body, media = store.raw_query(CONSTRUCT_ALL, "csv")
    assert media == "text/turtle"
    assert len(list(pyoxigraph.parse(body, pyoxigraph.RdfFormat.TURTLE))) == len(DATA)


def test_raw_malformed_query(store: Store) -> None:
    with pytest.raises(QueryError):
        store.raw_query("SELECT * WHERE { ?s ?p }", "json")


@pytest.mark.parametrize("fmt", RESULT_FORMATS + GRAPH_FORMATS)
def test_both_stores_answer_the_same(both: tuple[Store, Store], fmt: str) -> None:
    emb, rem = both
    text = CONSTRUCT_ALL if fmt in GRAPH_FORMATS else SELECT_ALL
    e_body, e_media = emb.raw_query(text, fmt)
    r_body, r_media = rem.raw_query(text, fmt)
    assert e_media == r_media
    if fmt in GRAPH_FORMATS:
        assert set(pyoxigraph.parse(e_body, PARSE[fmt])) == set(pyoxigraph.parse(r_body, PARSE[fmt]))
    else:
        assert e_body == r_body      # ORDER BY: same rows in the same order, same serialiser


def test_both_stores_named_queries_agree(both: tuple[Store, Store]) -> None:
    emb, rem = both
    assert _quads(emb) == _quads(rem)
    assert emb.named_graphs() == rem.named_graphs()
    v = Values.column("o", [BRANCH_EN, BAD_HE, PLAIN])
    assert emb.select("select-subjects-by-literal", values=v) == rem.select("select-subjects-by-literal", values=v)
    assert set(emb.construct("construct-graph", bind={"g": G1})) == set(rem.construct("construct-graph", bind={"g": G1}))


def test_load_ntriples_replaces_and_counts_statements(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "spool.nt"
    f.write_text("# a comment\n\n"
                 f"{A} {LABEL} {BRANCH_EN} .\n"
                 f"{B} {LABEL} {BAD_HE} .\n"
                 "   \n"
                 f"_:x {LABEL} {PLAIN} .\n"
                 f"{C} {LABEL} \"no newline at the end\" .", encoding="utf-8")
    seen: list[int] = []
    assert store.load_ntriples(G1, str(f), progress=seen.append) == 4
    assert sum(seen) == 4
    got = store.construct("construct-graph", bind={"g": G1})
    assert len(got) == 4 and Triple(B, LABEL, BAD_HE) in got
    assert len(store.construct("construct-graph", bind={"g": G2})) == 1    # untouched


def test_load_ntriples_broken_file_leaves_no_graph(store: Store, tmp_path: Path) -> None:
    f = tmp_path / "broken.nt"
    f.write_text(f"{A} {LABEL} {BRANCH_EN} .\n{A} {LABEL} \"unterminated .\n", encoding="utf-8")
    with pytest.raises(SyntaxError):
        store.load_ntriples(G1, str(f))
    assert G1 not in store.named_graphs()


def test_load_graph_keeps_blank_nodes_across_chunks(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import kg_rag.store.remote as remote_mod

    monkeypatch.setattr(remote_mod, "CHUNK", 2)     # the remote store sends many requests
    bn = BlankNode()
    g = NamedNode(EX + "chunked")
    quads = [Quad(A, LABEL, Literal(f"v{i}"), g) for i in range(5)]
    quads[1:1] = [Quad(A, LABEL, bn, g), Quad(bn, LABEL, Literal("one")), Quad(bn, LABEL, Literal("two"))]
    seen: list[int] = []
    assert store.load_graph(g, quads, progress=seen.append) == 8
    assert sum(seen) == 8
    got = store.construct("construct-graph", bind={"g": g})
    blanks = {t.subject for t in got if isinstance(t.subject, BlankNode)}
    assert len(got) == 8 and len(blanks) == 1        # one blank node with both of its triples
    assert {t.object for t in got if isinstance(t.object, BlankNode)} == blanks


@pytest.mark.parametrize("text,fmt", [
    ("ASK { GRAPH ?g { ?s ?p ?o } }", "csv"), ("ASK { GRAPH ?g { ?s ?p ?o } }", "tsv"),
    ("ASK { GRAPH ?g { ?s ?p ?o } }", "turtle"), ("SELECT * WHERE { }", "no-such-format"),
    (CONSTRUCT_ALL, "no-such-format"), (f"DESCRIBE {A} FROM {G1}", "ntriples"),
])
def test_both_stores_edge_formats(both: tuple[Store, Store], text: str, fmt: str) -> None:
    emb, rem = both
    e, r = emb.raw_query(text, fmt), rem.raw_query(text, fmt)
    assert e[1] == r[1]
    if e[1] in GRAPH_MEDIA.values():
        parse_fmt = next(f for f, m in GRAPH_MEDIA.items() if m == e[1])
        assert set(pyoxigraph.parse(e[0], PARSE[parse_fmt])) == set(pyoxigraph.parse(r[0], PARSE[parse_fmt]))
    else:
        assert e[0] == r[0]


def test_bind_and_values_may_not_overlap(store: Store) -> None:
    with pytest.raises(QueryError, match="both in bind= and in values="):
        store.select("select-subjects-by-literal", bind={"o": PLAIN}, values=Values.column("o", [PLAIN]))
    with pytest.raises(QueryError, match="twice"):
        store.select("select-subjects-by-literal", values=Values(("o", "o"), [(PLAIN, PLAIN)]))


def test_load_graph_from_a_failing_source_drops_the_graph(store: Store,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import kg_rag.store.remote as remote_mod

    monkeypatch.setattr(remote_mod, "CHUNK", 2)     # the remote store has sent a PUT already

    def source() -> Iterator[Quad]:
        for i in range(3):
            yield Quad(A, LABEL, Literal(f"n{i}"))
        raise SyntaxError("the source broke half way")

    with pytest.raises(SyntaxError):
        store.load_graph(G1, source())
    assert store.named_graphs() == [G2]


SCRIPTS = [Literal("בַּד", language="he"), Literal("שמלה מבד כותנה", language="he"),
           Literal("قُماش", language="ar"), Literal("غصن الشجرة", language="ar"),
           Literal("מילה عربية mixed"), Literal("ـــ tatweel ـ", language="ar")]


def test_both_stores_agree_on_hebrew_and_arabic(both: tuple[Store, Store]) -> None:
    g = NamedNode(EX + "scripts")
    quads = [Quad(NamedNode(f"{EX}w{i}"), LABEL, lit, g) for i, lit in enumerate(SCRIPTS)]
    for s in both:
        s.apply(Change(insert=quads))
    emb, rem = both
    v = Values.column("o", SCRIPTS)
    assert emb.select("select-subjects-by-literal", values=v) == rem.select("select-subjects-by-literal", values=v)
    assert len(rem.select("select-subjects-by-literal", values=v)) == len(SCRIPTS)
    text = ("SELECT ?s ?o (STRLEN(?o) AS ?n) (LANG(?o) AS ?l) (UCASE(?o) AS ?u) (STRSTARTS(?o, \"ב\") AS ?b) "
            f"WHERE {{ GRAPH <{g.value}> {{ ?s ?p ?o }} }} ORDER BY ?s")
    for fmt in RESULT_FORMATS:
        assert emb.raw_query(text, fmt) == rem.raw_query(text, fmt), fmt
    found = 'SELECT ?s WHERE { GRAPH ?g { ?s ?p "قُماش"@ar } }'
    assert emb.raw_query(found, "json") == rem.raw_query(found, "json")
    assert set(emb.construct("construct-graph", bind={"g": g})) == set(rem.construct("construct-graph", bind={"g": g}))
