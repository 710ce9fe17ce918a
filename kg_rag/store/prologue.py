"""The prefixes predeclared for a user's SPARQL (``kg-rag sparql``, ``/sparql``,
:meth:`kg_rag.api.KnowledgeGraph.raw_query`), and the engine's syntax errors as one line that
points into the user's own text.

The embedded engine takes the prefixes as a parameter (``prefixes=``), so the user's text is
parsed as written. A remote endpoint gets them as a prologue on the query's first line
(:func:`predeclare`); :func:`syntax_message` then subtracts that prologue from the column of an
error on line 1, so ``error at 1:893`` on a one-line query reads ``1:10`` again.
"""

from __future__ import annotations

import re

from kg_rag.namespaces import PREFIXES

#: the names of the predeclared prefixes (for the service description)
PREDECLARED: tuple[str, ...] = tuple(PREFIXES)
#: name → IRI, for an engine that takes the prefixes as a parameter (pyoxigraph's ``prefixes=``)
PREFIX_IRIS: dict[str, str] = dict(PREFIXES)
#: the prologue for an engine that cannot take prefixes as a parameter: one line, no newline
PROLOGUE = "".join(f"PREFIX {p}: <{iri}> " for p, iri in PREFIXES.items())
MAX_MESSAGE = 200

_POSITION = re.compile(r"^(?:.*?)error at (\d+):(\d+)(?:-(\d+):(\d+))?:?\s*(.*)$", re.DOTALL)
_PNAME_BEFORE = re.compile(r"([A-Za-z][\w.\-]*)?:[\w.\-]*$")


def predeclare(text: str) -> str:
    """``text`` behind the one-line :data:`PROLOGUE` (lines keep their numbers)."""
    return PROLOGUE + text


def syntax_message(message: str, query: str, shift: int = 0) -> str:
    """The engine's parse error ``message`` for ``query`` as one short line, its position in the
    user's text (``shift``: characters of prologue in front of line 1)."""
    flat = " ".join(message.split())
    m = _POSITION.match(flat)
    if m is None:
        return _cut(flat)
    line, col, rest = int(m.group(1)), int(m.group(2)), m.group(5)
    if line == 1:
        col = max(1, col - shift)
    where = f"line {line}, column {col}"
    undeclared = _undeclared(query)
    if "Prefix not found" in rest or undeclared:
        lines = query.split("\n")
        before = lines[line - 1][: col - 1] if 0 < line <= len(lines) else ""
        found = _PNAME_BEFORE.search(before) if "Prefix not found" in rest else None
        name = (f"'{(found.group(1) or '')[:40]}:'" if found else
                f"'{undeclared[:40]}:'" if undeclared else "a prefix")
        # the engine reads some undeclared prefixes (ex:, ab:) as the start of a keyword and
        # says "expected OPTIONAL": an undeclared prefix anywhere is the likelier mistake
        return (f"{where}: {name} is not declared; declare it (PREFIX p: <…>) or use one of the "
                f"predeclared prefixes {' '.join(PREFIXES)}")
    return _cut(f"{where}: {rest}")


def _undeclared(query: str) -> str | None:
    """The first prefix a prefixed name of ``query`` uses that is neither declared in it nor
    predeclared (None: every one is known)."""
    from kg_rag.store.guard import tokens

    toks = [t for t in tokens(query) if t.kind not in ("ws", "comment")]
    declared = set(PREFIXES)
    for i, t in enumerate(toks):
        if t.keyword == "PREFIX" and i + 1 < len(toks) and toks[i + 1].kind == "pname":
            declared.add(toks[i + 1].text.partition(":")[0])
    for i, t in enumerate(toks):
        if t.kind == "pname" and not (i > 0 and toks[i - 1].keyword == "PREFIX"):
            prefix = t.text.partition(":")[0]
            if prefix not in declared:
                return prefix or None
    return None


def _cut(text: str) -> str:
    if len(text) <= MAX_MESSAGE:
        return text
    head = text[:MAX_MESSAGE]
    comma = head.rfind(", ")
    return (head[:comma] if comma > MAX_MESSAGE // 2 else head) + " …"


__all__ = ["PREDECLARED", "PROLOGUE", "predeclare", "syntax_message"]
