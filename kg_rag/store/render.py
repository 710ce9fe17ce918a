"""The one audited place where RDF terms become SPARQL text.

Only pyoxigraph term objects are rendered, through their own N-Triples serialisation (which
escapes quotes, backslashes, newlines and everything else). Plain Python strings are refused:
a value must become an RDF term first (``Literal(...)``, ``NamedNode(...)``), so no caller can
format user text into a query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Triple

from kg_rag.errors import QueryError

Term = NamedNode | BlankNode | Literal | Triple


def term(value: object) -> str:
    """SPARQL/N-Triples text of one RDF term object."""
    if isinstance(value, (NamedNode, Literal)):
        return str(value)
    if isinstance(value, BlankNode):
        raise QueryError("blank nodes cannot be bound into a query")
    raise QueryError(f"only RDF term objects can be bound into a query, not {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class Values:
    """Rows of bindings for a ``VALUES`` block (``None`` is UNDEF)."""

    variables: tuple[str, ...]
    rows: Sequence[Sequence[object | None]]

    @classmethod
    def one(cls, bindings: dict[str, object]) -> Values:
        names = tuple(sorted(bindings))
        return cls(names, [tuple(bindings[n] for n in names)])

    @classmethod
    def column(cls, name: str, items: Iterable[object]) -> Values:
        return cls((name,), [(i,) for i in items])


def values_block(values: Values) -> str:
    if not values.variables:
        return ""
    head = " ".join("?" + v for v in values.variables)
    lines = []
    for row in values.rows:
        if len(row) != len(values.variables):
            raise QueryError("a VALUES row has the wrong number of terms")
        lines.append("(" + " ".join("UNDEF" if t is None else term(t) for t in row) + ")")
    return f"VALUES ({head}) {{\n" + "\n".join(lines) + "\n}"


#: why :func:`quads_block` (and :func:`check_quads`) refuse a quad with a blank-node subject
NO_BLANK_SUBJECT = "kg-rag writes no blank nodes through updates; mint an IRI"


def check_quads(quads: Iterable[Quad]) -> None:
    """Refuse, without rendering them, the quads that :func:`quads_block` refuses (in its order:
    the graph, the subject, the object), with the same errors — for a store that writes the quad
    objects themselves (the embedded store's :meth:`~kg_rag.store.EmbeddedStore.apply`), so it
    writes exactly what the update text would carry."""
    for q in quads:
        g = q.graph_name
        if not isinstance(g, (NamedNode, DefaultGraph)):
            term(g)
        if isinstance(q.subject, BlankNode):   # a subject is a NamedNode or a BlankNode
            raise QueryError(NO_BLANK_SUBJECT)
        o = q.object
        if not isinstance(o, (NamedNode, Literal)):
            term(o)


def quads_block(quads: Iterable[Quad]) -> str:
    """``GRAPH <g> { s p o . }`` groups for INSERT DATA / DELETE DATA."""
    by_graph: dict[str, list[str]] = {}
    for q in quads:
        g = q.graph_name
        key = "" if isinstance(g, DefaultGraph) else term(g)
        s = q.subject
        if isinstance(s, BlankNode):
            raise QueryError(NO_BLANK_SUBJECT)
        line = f"{term(s)} {term(q.predicate)} {term(q.object)} ."
        by_graph.setdefault(key, []).append(line)
    parts = []
    for graph_text, lines in by_graph.items():
        body = "\n".join(lines)
        parts.append(f"GRAPH {graph_text} {{\n{body}\n}}" if graph_text else body)
    return "\n".join(parts)
