"""Which graphs a user's update may write, read from its text (kg_rag/store/update_targets.py)."""

from __future__ import annotations

import pytest

from kg_rag.store.update_targets import Targets, written_graphs

A, B = "http://ex.org/a", "http://ex.org/b"
EVERY = Targets(every=True)


@pytest.mark.parametrize(("text", "expected"), [
    (f"INSERT DATA {{ GRAPH <{A}> {{ <s> <p> <o> }} }}", Targets(frozenset({A}))),
    (f"DELETE DATA {{ GRAPH <{A}> {{ <s> <p> 'x' }} GRAPH <{B}> {{ <s> <p> <o> }} }}",
     Targets(frozenset({A, B}))),
    # a triple outside GRAPH goes to the default graph
    (f"INSERT DATA {{ GRAPH <{A}> {{ <s> <p> <o> }} <s> <p> [ <q> ( 1 2 ) ] }}", Targets(frozenset({A}), default=True)),
    # the prologue's prefixes resolve graph names; a keyword inside a string or comment is none
    (f"PREFIX ex: <http://ex.org/> # GRAPH <{B}> {{\nINSERT DATA {{ GRAPH ex:a {{ ex:s ex:p \"GRAPH <{B}> {{\" }} }}",
     Targets(frozenset({A}))),
    # WITH: the templates' triples go to its graph; WHERE and USING only read
    (f"WITH <{A}> DELETE {{ ?s ?p ?o }} INSERT {{ ?s ?p 'y' }} WHERE {{ GRAPH <{B}> {{ ?s ?p ?o }} }}",
     Targets(frozenset({A}))),
    (f"INSERT {{ GRAPH <{A}> {{ ?s ?p ?o }} }} USING <{B}> WHERE {{ ?s ?p ?o }}", Targets(frozenset({A}))),
    (f"DELETE WHERE {{ GRAPH <{A}> {{ ?s ?p ?o }} }}", Targets(frozenset({A}))),
    (f"CLEAR GRAPH <{A}> ; DROP SILENT DEFAULT ; CREATE GRAPH <{B}>", Targets(frozenset({A, B}), default=True)),
    (f"COPY <{A}> TO DEFAULT", Targets(default=True)),
    (f"ADD DEFAULT TO GRAPH <{B}>", Targets(frozenset({B}))),
    (f"MOVE <{A}> TO <{B}>", Targets(frozenset({A, B}))),
    # relative graph names resolve against the base (BASE, or the caller's base IRI)
    ("BASE <http://ex.org/> INSERT DATA { GRAPH <a> { <s> <p> <o> } }", Targets(frozenset({A}))),
    ("INSERT DATA { GRAPH <a> { <s> <p> <o> } }", Targets(frozenset({A}))),
    # what it cannot tell: every graph
    ("DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }", EVERY),
    ("DROP ALL", EVERY),
    ("CLEAR NAMED", EVERY),
    ("INSERT DATA { GRAPH undeclared:a { <s> <p> <o> } }", EVERY),
    ("INSERT DATA { GRAPH <relative> { <s> <p> <o> } }", Targets(frozenset({"http://ex.org/relative"}))),
    ("not an update at all", EVERY),
    (f"INSERT DATA {{ GRAPH <{A}> {{ <s> <p> <o> }}", EVERY),
])
def test_written_graphs(text: str, expected: Targets) -> None:
    assert written_graphs(text, base_iri="http://ex.org/") == expected


def test_a_relative_graph_name_without_a_base_may_be_any_graph() -> None:
    assert written_graphs("INSERT DATA { GRAPH <a> { <s> <p> <o> } }") == EVERY
