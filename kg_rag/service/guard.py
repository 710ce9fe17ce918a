"""The service's view of the SPARQL guard (:mod:`kg_rag.store.guard`, which every path that runs
a user's SPARQL uses), plus the protocol's ``using-graph-uri`` rewriting of updates."""

from __future__ import annotations

from kg_rag.errors import QueryError
from kg_rag.store.guard import (
    DEFAULT_MAX_CHAIN,
    QueryInfo,
    QueryRefused,
    QueryTooLarge,
    Token,
    check_query,
    check_update,
    tokens,
)

__all__ = ["DEFAULT_MAX_CHAIN", "QueryInfo", "QueryRefused", "QueryTooLarge", "Token", "add_using",
           "check_query", "check_update", "tokens"]


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
