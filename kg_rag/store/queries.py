"""The SPARQL layer: every query and update lives in ``sparql/`` as one file with a header.

Header (comment lines at the top)::

    # purpose: what the query is for
    # inputs: ?key ?lang       (variables a caller may bind; "none" if there are none)
    # outputs: ?sense ?concept (result variables, or "graph"/"boolean"/"update")

Values reach a query only as RDF terms: a ``VALUES`` block rendered from term objects by
:func:`kg_rag.store.render.values_block`, inserted right after the first ``WHERE {`` of the query,
on both stores (pyoxigraph's ``substitutions=`` is not a pre-binding inside BIND/UNION — see
``kg_rag/store/embedded.py``). Queries are parsed once (by the engine, on an
empty in-memory store) when first used; a missing or broken file raises :class:`QueryError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import pyoxigraph

from kg_rag.errors import QueryError
from kg_rag.namespaces import PREFIXES
from kg_rag.resources import resource_dir

_HEADER = re.compile(r"^#\s*(purpose|inputs|outputs)\s*:\s*(.*)$", re.I)
_WHERE = re.compile(r"\bWHERE\s*\{", re.I)
_FETCHES = re.compile(r"(?<![?$\w:])(LOAD|SERVICE)(?![\w:])", re.I)
_IRI = re.compile(r'<[^<>"{}|^`\\\x00-\x20]*>')
_STRING = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
                     r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
_VAR = re.compile(r"[?$]([A-Za-z_][A-Za-z0-9_]*)")
_PREFIX_LINE = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())


@dataclass(frozen=True, slots=True)
class Query:
    name: str
    text: str          # the body as written in the file, with the standard prefixes prepended
    purpose: str
    inputs: frozenset[str]
    outputs: tuple[str, ...]
    is_update: bool
    values_at: int | None = None   # offset just after the first code ``WHERE {`` (-1: none)

    def check_inputs(self, names: set[str] | frozenset[str]) -> None:
        unknown = set(names) - self.inputs
        if unknown:
            raise QueryError(
                f"query {self.name} does not take {sorted(unknown)}; its inputs are "
                f"{sorted(self.inputs) or 'none'}"
            )

    def with_values(self, block: str) -> str:
        """The text with a rendered VALUES block inside the first WHERE group."""
        if not block:
            return self.text
        at = _values_offset(self.text) if self.values_at is None else self.values_at
        if at < 0:
            raise QueryError(f"query {self.name} has no WHERE group to bind values into")
        return self.text[:at] + "\n" + block + "\n" + self.text[at:]


def code_only(text: str) -> str:
    """``text`` with comments, string literals and IRIs blanked out (same length and offsets),
    so that keywords are only found where they are SPARQL code."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            m = _STRING.match(text, i)
            j = m.end() if m else i + 1
        elif c == "<" and (m := _IRI.match(text, i)) is not None:
            j = m.end()
        else:
            out.append(c)
            i += 1
            continue
        out.append(" " * (j - i))
        i = j
    return "".join(out)


def _values_offset(text: str) -> int:
    m = _WHERE.search(code_only(text))
    return m.end() if m else -1


def _parse_header(name: str, raw: str) -> tuple[str, frozenset[str], tuple[str, ...]]:
    fields: dict[str, str] = {}
    for line in raw.splitlines():
        if not line.startswith("#"):
            break
        m = _HEADER.match(line)
        if m:
            fields[m.group(1).lower()] = m.group(2).strip()
    missing = {"purpose", "inputs", "outputs"} - fields.keys()
    if missing:
        raise QueryError(f"query {name} lacks header line(s) {sorted(missing)}")
    inputs = frozenset(_VAR.findall(fields["inputs"]))
    outputs = tuple(_VAR.findall(fields["outputs"]))
    return fields["purpose"], inputs, outputs


_EMPTY = pyoxigraph.Store()


@cache
def get(name: str) -> Query:
    """The query ``name`` (file name without extension, e.g. ``select-candidates``)."""
    folder = resource_dir("sparql")
    for ext in (".rq", ".ru"):
        f = folder.joinpath(name + ext)
        if f.is_file():
            raw = f.read_text(encoding="utf-8")
            is_update = ext == ".ru"
            break
    else:
        raise QueryError(f"no query file sparql/{name}.rq or .ru is installed")
    purpose, inputs, outputs = _parse_header(name, raw)
    text = _PREFIX_LINE + raw
    code = code_only(text)
    fetch = _FETCHES.search(code)
    if fetch:
        raise QueryError(f"query file sparql/{name} uses {fetch.group(1).upper()}, which makes the "
                         f"engine fetch URLs; kg-rag query files must not")
    m = _WHERE.search(code)
    try:
        if is_update:
            # parse without touching data: run against a throw-away empty store
            pyoxigraph.Store().update(text)
        else:
            _EMPTY.query(text)
    except SyntaxError as e:
        raise QueryError(f"query file sparql/{name}{'.ru' if is_update else '.rq'} is broken: {e}") from None
    except (RuntimeError, OSError):
        pass  # it parsed; running it on an empty store failed (e.g. DROP GRAPH of no graph)
    return Query(name, text, purpose, inputs, outputs, is_update, m.end() if m else -1)


def names() -> list[str]:
    """Every query installed, by name."""
    folder = resource_dir("sparql")
    out = []
    for f in folder.iterdir():
        n = f.name
        if n.endswith((".rq", ".ru")):
            out.append(n[:-3])
    return sorted(out)
