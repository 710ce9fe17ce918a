"""Checks on query and update text from outside, BEFORE the engine sees it.

The text is tokenised the way the SPARQL grammar does (longest match: IRIs, the four kinds of
string literal, comments, variables, prefixed names, keywords), so a keyword inside a string, an
IRI or a comment is not mistaken for one, and ``ex:service`` or ``?load`` are not keywords.

Refused outright (:class:`QueryRefused`, HTTP 403): ``SERVICE`` (in queries and updates) and
``LOAD`` (updates) — pyoxigraph would fetch the URL. Because a PEG parser may split ``<`` as an
operator where the grammar's tokens see an IRI, a second, stricter scan over the IRI tokens looks
for a ``SERVICE``/``LOAD`` that is followed by something an endpoint could be. The query child
additionally has no network at all (:mod:`.sandbox`): this module gives the clean answer, the
sandbox the guarantee.

Too large (:class:`QueryTooLarge`, 413) and too deeply nested (:class:`QueryError`, 400) are
checked on the raw text: a few thousand nested brackets crash the engine's native stack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kg_rag.errors import QueryError

__all__ = ["QueryInfo", "QueryRefused", "QueryTooLarge", "Token", "check_query", "check_update",
           "tokens"]


class QueryRefused(QueryError):
    """The text asks for something a public endpoint never does (fetching URLs)."""

    http_status = 403
    title = "query refused"


class QueryTooLarge(QueryError):
    http_status = 413
    title = "query too large"


_PN = r"[^\W\d]|_"  # a letter (any script) or underscore
_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''
              |\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
              |'(?:[^'\\\n\r]|\\.)*'
              |"(?:[^"\\\n\r]|\\.)*")
  | (?P<var>[?$][\w\u00B7\u0300-\u036F\u203F-\u2040]+)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<name>(?:_:)?[\w:%\\][\w\-.:%\\\u00B7]*)
  | (?P<open>[{(\[])
  | (?P<close>[})\]])
  | (?P<punct>\^\^|&&|\|\||[<>!=]=?|.)
    """,
    re.VERBOSE | re.DOTALL,
)
_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
_UPDATE_OPS = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH")
# SERVICE/LOAD followed by what could name an endpoint (used on IRI tokens, see module doc)
_HIDDEN = re.compile(r"(?<![\w?$:@\-])(SERVICE|LOAD)(?:\s|\#[^\n]*\n)*(?:SILENT\b|[?$<]|[\w\-]*:)",
                     re.IGNORECASE)


def _hidden(text: str, refused: tuple[str, ...]) -> None:
    for m in _HIDDEN.finditer(text):
        if m.group(1).upper() in refused:
            raise QueryRefused(f"{m.group(1).upper()} is not allowed on this endpoint: it would "
                               f"fetch data from another server")


@dataclass(frozen=True, slots=True)
class Token:
    kind: str       # ws comment iri string var lang name open close punct
    text: str
    start: int

    @property
    def keyword(self) -> str | None:
        """The upper-cased keyword when this is a bare word (not a prefixed name or number)."""
        if self.kind != "name" or ":" in self.text:
            return None
        word = self.text.rstrip(".")
        return word.upper() if word[:1].isalpha() else None


def tokens(text: str) -> Iterator[Token]:
    """All tokens of ``text`` including whitespace and comments (every character is covered)."""
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        yield Token(kind, m.group(), m.start())


@dataclass(frozen=True, slots=True)
class QueryInfo:
    form: str                 # SELECT | ASK | CONSTRUCT | DESCRIBE | UPDATE
    depth: int                # deepest bracket nesting seen
    dataset_clauses: bool     # FROM / FROM NAMED (queries) or USING / WITH (updates) present


def _size(text: str, max_bytes: int) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise QueryTooLarge(f"the query is {size} bytes; this endpoint accepts at most {max_bytes}")


def _scan(text: str, max_depth: int, refused: tuple[str, ...]) -> tuple[list[Token], int]:
    depth = deepest = 0
    ambiguous = False
    significant: list[Token] = []
    for tok in tokens(text):
        if tok.kind in ("ws", "comment"):
            continue
        if tok.kind == "open":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > max_depth:
                    raise QueryError(f"the query nests brackets deeper than {max_depth} levels; "
                                     f"flatten it")
        elif tok.kind == "close":
            depth = max(0, depth - 1)
        elif tok.keyword in refused:
            raise QueryRefused(f"{tok.keyword} is not allowed on this endpoint: it would fetch "
                               f"data from another server")
        elif tok.kind == "iri":
            # a parser that reads this '<' as "less than" sees these characters as tokens
            _hidden(tok.text, ("SERVICE",))
            ambiguous = ambiguous or "'" in tok.text
        significant.append(tok)
    if ambiguous:
        # an IRI with an apostrophe may be a comparison with a string to the engine, which then
        # ends strings where this tokeniser does not: scan everything, strings included
        _hidden(text, refused)
    return significant, deepest


def _prologue_end(toks: list[Token]) -> int:
    """Index of the first token after BASE/PREFIX declarations."""
    i = 0
    while i < len(toks):
        kw = toks[i].keyword
        if kw == "BASE":
            i += 2
        elif kw == "PREFIX":
            i += 3
        else:
            break
    return i


def check_query(text: str, max_bytes: int, max_depth: int) -> QueryInfo:
    """Size, nesting and refused keywords of a query; its form (SELECT/ASK/CONSTRUCT/DESCRIBE)."""
    _size(text, max_bytes)
    toks, deepest = _scan(text, max_depth, ("SERVICE", "LOAD"))
    i = _prologue_end(toks)
    form = toks[i].keyword if i < len(toks) else None
    if form not in _FORMS:
        if form in _UPDATE_OPS:
            raise QueryError("this is an update: send it as 'update=' or application/sparql-update")
        raise QueryError("malformed query: expected SELECT, ASK, CONSTRUCT or DESCRIBE")
    dataset = any(t.keyword == "FROM" for t in toks)
    return QueryInfo(str(form), deepest, dataset)


def check_update(text: str, max_bytes: int, max_depth: int) -> QueryInfo:
    """Size, nesting and refused keywords (LOAD, SERVICE) of an update."""
    _size(text, max_bytes)
    toks, deepest = _scan(text, max_depth, ("SERVICE", "LOAD"))
    dataset = any(t.keyword in ("USING", "WITH") for t in toks)
    return QueryInfo("UPDATE", deepest, dataset)


def add_using(text: str, using: list[str], using_named: list[str]) -> str:
    """Insert ``USING``/``USING NAMED`` clauses (rendered IRIs) before each operation's WHERE.

    The protocol's ``using-graph-uri``/``using-named-graph-uri`` parameters apply to every
    DELETE/INSERT … WHERE operation of the request; an operation with its own USING or WITH is a
    conflict (400).
    """
    clause = " ".join([f"USING {g}" for g in using] + [f"USING NAMED {g}" for g in using_named])
    out: list[str] = []
    last = 0
    depth = 0
    op: list[str] = []
    for tok in tokens(text):
        if tok.kind == "open":
            if depth == 0:
                op.append("{")
            depth += 1
        elif tok.kind == "close":
            depth = max(0, depth - 1)
        elif tok.kind == "punct" and tok.text == ";" and depth == 0:
            op = []
        elif depth == 0 and tok.keyword and tok.keyword not in ("PREFIX", "BASE"):
            kw = tok.keyword
            if kw in ("USING", "WITH"):
                raise QueryError("the update names its dataset (USING/WITH) and the request does "
                                 "too (using-graph-uri/using-named-graph-uri): use only one")
            # DELETE/INSERT {…} WHERE, but not the DELETE WHERE {…} short form
            if kw == "WHERE" and op and op[0] in ("INSERT", "DELETE") and op[-1] == "{":
                out.append(text[last:tok.start])
                out.append(clause + " ")
                last = tok.start
            op.append(kw)
    out.append(text[last:])
    return "".join(out)
