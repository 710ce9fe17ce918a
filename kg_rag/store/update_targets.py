"""Which graphs a user's SPARQL update may write, read from its text (SPARQL 1.1 Update §3).

A user's update (:meth:`kg_rag.api.KnowledgeGraph.update`, the service's ``/sparql`` updates)
is run as written; what kg-rag derives from the vocabularies (the annotator's match keys, the
caches keyed by the catalog version) must follow it when it edits one. This module answers the
one question that needs: the named graphs it may write, whether it writes the default graph,
and whether it may write graphs it does not name (``GRAPH ?g`` in a template, ``CLEAR ALL``,
``DROP NAMED``, a graph name that cannot be resolved). The answer errs on the side of "may
write": anything this reading does not follow counts as writing every graph.

What writes, per operation:

* ``INSERT DATA`` / ``DELETE DATA`` / ``DELETE WHERE`` blocks and the ``INSERT`` / ``DELETE``
  templates of a ``DELETE … INSERT … WHERE``: each ``GRAPH <g> { … }`` writes ``g``, a triple
  outside one writes the ``WITH`` graph, else the default graph. ``WHERE`` and ``USING`` only
  read;
* ``CLEAR`` / ``DROP`` / ``CREATE`` ``GRAPH <g>``: ``g``; ``DEFAULT``: the default graph;
  ``NAMED`` / ``ALL``: every graph;
* ``ADD`` / ``COPY`` ``… TO <g>``: ``g``; ``MOVE <s> TO <g>``: both.

Tokens come from the guard's tokeniser (:func:`kg_rag.store.guard.tokens`), so a keyword inside
a string, an IRI or a comment is never read as one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

from kg_rag.store.guard import Token, tokens

__all__ = ["Targets", "written_graphs"]


@dataclass(frozen=True, slots=True)
class Targets:
    """The graphs an update may write."""

    graphs: frozenset[str] = frozenset()   # named graphs it names as written
    default: bool = False                  # it may write the default graph
    every: bool = False                    # it may write graphs it does not name


_EVERY = Targets(every=True)
_TEMPLATE_OPS = frozenset({"INSERT", "DELETE"})
_GRAPH_OPS = frozenset({"CLEAR", "DROP", "CREATE"})
_PAIR_OPS = frozenset({"ADD", "MOVE", "COPY"})


class _Unknown(Exception):
    """A construct this reading does not follow: the update may write anything."""


class _Reader:
    def __init__(self, toks: list[Token], base: str | None, prefixes: Mapping[str, str]) -> None:
        self.toks, self.i = toks, 0
        self.base = base
        self.prefixes = dict(prefixes)
        self.graphs: set[str] = set()
        self.default = False

    # --- tokens -------------------------------------------------------------------------------
    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise _Unknown("unexpected end")
        self.i += 1
        return tok

    def keyword(self) -> str | None:
        tok = self.peek()
        return tok.keyword if tok is not None else None

    def take(self, kw: str) -> bool:
        if self.keyword() == kw:
            self.i += 1
            return True
        return False

    def iri(self, tok: Token) -> str:
        """A graph name token as an absolute IRI (else :class:`_Unknown`)."""
        if tok.kind == "iri":
            ref = tok.text[1:-1]
            if ":" in ref.split("/", 1)[0]:
                return ref
            if self.base is None:
                raise _Unknown("relative IRI without a base")
            return urljoin(self.base, ref)
        if tok.kind == "pname":
            prefix, _, local = tok.text.partition(":")
            if prefix not in self.prefixes or "\\" in local or "%" in local:
                raise _Unknown("prefixed name not followed")
            return self.prefixes[prefix] + local
        raise _Unknown("not a graph name")

    # --- the update ---------------------------------------------------------------------------
    def read(self) -> Targets:
        while self.peek() is not None:
            self.prologue()
            if self.peek() is None:
                break
            self.operation()
            tok = self.peek()
            if tok is not None:
                if tok.text != ";":
                    raise _Unknown("operations not separated by ';'")
                self.i += 1
        return Targets(frozenset(self.graphs), self.default)

    def prologue(self) -> None:
        while True:
            if self.take("BASE"):
                self.base = self.iri(self.next())
            elif self.take("PREFIX"):
                name = self.next()
                if name.kind != "pname" or not name.text.endswith(":"):
                    raise _Unknown("malformed PREFIX")
                self.prefixes[name.text[:-1]] = self.iri(self.next())
            else:
                return

    def operation(self) -> None:
        kw = self.keyword()
        if kw in _GRAPH_OPS:
            self.i += 1
            self.take("SILENT")
            self.graph_ref(kw == "CREATE")
        elif kw in _PAIR_OPS:
            self.i += 1
            self.take("SILENT")
            source = self.graph_or_default()
            if not self.take("TO"):
                raise _Unknown("TO expected")
            self.written(self.graph_or_default())
            if kw == "MOVE":
                self.written(source)
        elif kw == "WITH":
            self.i += 1
            self.modify(self.iri(self.next()))
        elif kw in _TEMPLATE_OPS:
            self.modify(None)
        else:
            raise _Unknown(f"operation {kw!r} not followed")

    def graph_ref(self, create: bool) -> None:
        """After CLEAR/DROP/CREATE [SILENT]: GRAPH <g> | DEFAULT | NAMED | ALL."""
        if self.take("GRAPH"):
            self.graphs.add(self.iri(self.next()))
        elif not create and self.take("DEFAULT"):
            self.default = True
        else:
            raise _Unknown("NAMED, ALL or an unknown graph reference")

    def graph_or_default(self) -> str | None:
        if self.take("DEFAULT"):
            return None
        self.take("GRAPH")
        return self.iri(self.next())

    def written(self, graph: str | None) -> None:
        if graph is None:
            self.default = True
        else:
            self.graphs.add(graph)

    def modify(self, with_graph: str | None) -> None:
        """INSERT DATA / DELETE DATA / DELETE WHERE / [DELETE {…}] [INSERT {…}] [USING …] WHERE {…}."""
        if self.take("INSERT") or self.take("DELETE"):
            if self.take("DATA"):
                self.template(with_graph)
                return
            if self.take("WHERE"):
                self.template(with_graph)
                return
            self.template(with_graph)
            if self.take("INSERT"):
                self.template(with_graph)
        while self.take("USING"):
            self.take("NAMED")
            self.iri(self.next())
        if not self.take("WHERE"):
            raise _Unknown("WHERE expected")
        self.skip_group()

    def template(self, with_graph: str | None) -> None:
        """A quad template or data block ``{ … }``: which graphs its quads go to."""
        if self.next().text != "{":
            raise _Unknown("'{' expected")
        while True:
            tok = self.next()
            if tok.text == "}":
                return
            if tok.keyword == "GRAPH":
                name = self.next()
                if name.kind == "var":
                    raise _Unknown("a graph variable")
                self.graphs.add(self.iri(name))
                self.skip_group()
            elif tok.text not in (".", ";", ","):
                # a triple outside GRAPH: the WITH graph, else the default graph
                self.written(with_graph)
                if tok.kind == "open":
                    self.i -= 1
                    self.skip_group()

    def skip_group(self) -> None:
        """Past one bracketed group (whatever it holds: it is read, not written)."""
        opened = self.next()
        if opened.kind != "open":
            raise _Unknown("a group expected")
        depth = 1
        while depth:
            tok = self.next()
            if tok.kind == "open":
                depth += 1
            elif tok.kind == "close":
                depth -= 1


def written_graphs(text: str, base_iri: str | None = None,
                   prefixes: Mapping[str, str] | None = None) -> Targets:
    """The graphs the update ``text`` may write (see the module docstring). ``prefixes``: any
    the engine knows besides those the text declares (a user's update gets none). Never raises: an update this
    reading does not follow (including a malformed one) gives ``Targets(every=True)``."""
    toks = [t for t in tokens(text) if t.kind not in ("ws", "comment")]
    try:
        return _Reader(toks, base_iri, prefixes or {}).read()
    except _Unknown:
        return _EVERY
