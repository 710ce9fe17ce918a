"""OpenLink Virtuoso 7.2 behind a remote store: every deviation from SPARQL 1.1 that kg-rag
meets there, handled here and nowhere else (measured on Debian's 7.2.5.1, see
tests/integration/test_virtuoso_quirks.py — one test per quirk):

- **default graph = union of all graphs.** A pattern outside ``GRAPH`` sees every named graph
  (and Virtuoso's own system graphs), where SPARQL 1.1 engines see an empty default graph. Read
  queries that read only the default graph (no ``GRAPH``, no ``FROM``) get
  ``FROM`` :data:`DEFAULT_GRAPH`, where kg-rag also writes what belongs to the default graph.
  A query that mixes ``GRAPH`` and default-graph patterns is not rewritten (kg-rag has none).
- **CONCAT garbles non-ASCII text**: a stored Hebrew literal concatenated with a non-ASCII
  string of the query text comes back as mojibake (UTF-8 bytes read as Latin-1), and STRLEN or
  STRAFTER over it are wrong too. There is no safe rewrite, so such a query is refused with a
  :class:`StoreError` instead of answered wrongly.
- **a plain literal and the same ``xsd:string`` literal differ**: ``"x"`` and
  ``"x"^^xsd:string`` (one term since RDF 1.1) neither join nor compare equal. kg-rag writes
  plain literals only (pyoxigraph's serialisation), and ``^^xsd:string`` is taken out of the
  text of queries and updates (users' included), so both sides are plain.
- **booleans come back as 1 and 0**: stored ones as ``"1"^^xsd:boolean`` (repaired in every
  answer's terms), computed ones (``(STRSTARTS(…) AS ?b)``, ``BIND(?x = ?y AS ?b)``) even as
  ``"1"^^xsd:integer``, so a projected or bound boolean expression is sent as
  ``STRDT(IF(expr, "true", "false"), xsd:boolean)``.
- **a VALUES block of several variables and rows drops language tags** of literals the store
  already holds (``"branch"@en`` becomes ``"branch"``, so it matches nothing: a silently short
  answer). Columns with one value in every row (``bind=`` next to ``values=``) become a block of
  their own; several varying columns with a language-tagged literal become a UNION of one-row
  blocks (at most :data:`MAX_UNION_ROWS`, more is refused with a StoreError).
- **an update request is not atomic**: when its last operation fails, the earlier ones stay
  applied. A failed change is a :class:`StoreError` that says the store may hold part of it
  (kg-rag's writes are idempotent: running the command again completes it).
- **``GRAPH ?g { }`` lists no graph**: sent as a DISTINCT subquery over the graphs' triples.
- **its system graphs** (``virtrdf#`` and two more) answer ``GRAPH ?g`` patterns: rows that
  bind one and triples about their IRIs (:data:`SYSTEM_PREFIXES`) are dropped from answers.
- **dateTime fractions come back padded** to milliseconds: given back in canonical form.
- **``SELECT *`` with no variable** answers a made-up ``_star_fake`` column: dropped.
- **large INSERT DATA fails** (~1,500 triples: "generated SQL text has exceeded 10000 lines",
  ~5,000: "memory exhausted"): a change is sent in requests of at most :data:`MAX_UPDATE_QUADS`.
- **user queries' answers** are serialised by Virtuoso in its own way (other JSON spacing,
  ``typed-literal``, booleans as 1): they are parsed and written again by pyoxigraph, so a
  caller gets the same bytes as from the embedded store.

Not handled here: the ``X-SPARQL-MaxRows`` cut and the ``X-SQL-State: S1TAT`` timeout
(answers that say so in headers only).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pyoxigraph
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, Triple

from kg_rag.errors import QueryError, StoreError
from kg_rag.serialize import json_term
from kg_rag.store import queries
from kg_rag.store.dialect import Dialect
from kg_rag.store.render import Values, values_block

if TYPE_CHECKING:
    from kg_rag.store.base import Change

XSD_BOOLEAN = NamedNode("http://www.w3.org/2001/XMLSchema#boolean")
XSD_DATETIME = NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")
_FRACTION = re.compile(r"(\.\d+)(?=Z|[+-]\d\d:\d\d|$)")
#: where the default graph's triples live on Virtuoso (its own default graph is all graphs)
DEFAULT_GRAPH = "urn:x-kg-rag:default-graph"
#: graphs a fresh Virtuoso 7.2 holds for itself; never listed, never dropped
SYSTEM_GRAPHS = frozenset({
    "http://www.openlinksw.com/schemas/virtrdf#",
    "http://www.w3.org/ns/ldp#",
    "http://localuriqaserver/sparql",
})
#: the IRIs of what the system graphs hold (a CONSTRUCT over GRAPH ?g cannot name the graph)
SYSTEM_PREFIXES = ("http://www.openlinksw.com/", "bif:", "sql:", "http://www.w3.org/ns/ldp#",
                   "http://www.w2.org/ns/ldp#",   # sic: the LDP graph of Virtuoso 7.2
                   "http://localuriqaserver/")
#: quads per update request (1,000 in one INSERT DATA still pass on 7.2.5.1, 1,500 fail)
MAX_UPDATE_QUADS = 500

#: rows of a several-column VALUES with language tags sent as a UNION (62 rows: 0.6 s to compile)
MAX_UNION_ROWS = 64

_EMPTY_GRAPH = re.compile(r"\bGRAPH\s+([?$][A-Za-z_][A-Za-z0-9_]*)\s*\{\s*\}", re.I)
STAR_FAKE = "_star_fake"

_FROM = re.compile(r"\bFROM\b", re.I)
_CONCAT = re.compile(r"\bCONCAT\s*\(", re.I)
_XSD_STRING = re.compile(r"\^\^\s*(?:<http://www\.w3\.org/2001/XMLSchema#string>|xsd:string(?![\w.:-]))")
_GRAPH = re.compile(r"\bGRAPH\b", re.I)
_WHERE = re.compile(r"\bWHERE\b", re.I)
_BRACE = re.compile(r"\{")


def _plain_strings(text: str) -> str:
    """``text`` with ``^^xsd:string`` taken off its literals (not inside strings or comments)."""
    code = queries.code_only(text)
    out, last = [], 0
    for m in _XSD_STRING.finditer(text):
        if code[m.start():m.start() + 2] != "^^":      # inside a string or a comment
            continue
        out.append(text[last:m.start()])
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _graphs_listed(text: str) -> str:
    """``GRAPH ?g { }`` (in code) as a subquery that lists the graphs holding triples."""
    code = queries.code_only(text)
    out, last = [], 0
    for m in _EMPTY_GRAPH.finditer(code):
        var = m.group(1)
        out += [text[last:m.start()],
                f"{{ SELECT DISTINCT {var} WHERE {{ GRAPH {var} {{ ?kgr_gs ?kgr_gp ?kgr_go }} }} }}"]
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _own_default_graph(text: str) -> str:
    """A query that reads only the default graph (no GRAPH, no FROM) reads :data:`DEFAULT_GRAPH`
    (``FROM``; Virtuoso's ``define input:default-graph-uri`` and the protocol's
    ``default-graph-uri`` make ASK, COUNT and ``GRAPH <g>`` answer wrongly on 7.2.5.1)."""
    code = queries.code_only(text)
    if _GRAPH.search(code) or _FROM.search(code):
        return text
    m = _WHERE.search(code) or _BRACE.search(code)
    at = m.start() if m else len(text)
    return f"{text[:at]}FROM <{DEFAULT_GRAPH}>\n{text[at:]}"


def visible(row: dict[str, Any]) -> bool:
    """False for a row that binds one of Virtuoso's own system graphs."""
    return not any(isinstance(v, NamedNode) and v.value in SYSTEM_GRAPHS for v in row.values())


_AS = re.compile(r"\bAS\s+[?$][A-Za-z_][A-Za-z0-9_]*\s*\)", re.I)
_BOOL_CALL = re.compile(r"^(?:NOT\s+)?EXISTS\b|^!(?!=)|^(?:true|false)$|^(?:STRSTARTS|STRENDS|CONTAINS|REGEX|"
                        r"LANGMATCHES|isIRI|isURI|isBlank|isLiteral|isNumeric|BOUND|sameTerm)\s*\(", re.I)
_BOOL_OP = re.compile(r"!=|<=|>=|[<>=]|&&|\|\||\bIN\b", re.I)
_XSD_BOOLEAN_IRI = "<http://www.w3.org/2001/XMLSchema#boolean>"


def _depth0(code: str) -> str:
    """``code`` with everything inside parentheses or braces blanked."""
    out, depth = [], 0
    for ch in code:
        if ch in "({":
            depth += 1
        out.append(ch if depth == 0 else " ")
        if ch in ")}":
            depth -= 1
    return "".join(out)


def _is_boolean(expr_code: str) -> bool:
    e = expr_code.strip()
    m = _BOOL_CALL.search(e)
    if m and (not m.group(0).endswith("(") or _closes_at_end(e, m.end() - 1)):
        return True
    return bool(_BOOL_OP.search(_depth0(e)))


def _closes_at_end(e: str, at: int) -> bool:
    depth = 0
    for i in range(at, len(e)):
        depth += {"(": 1, ")": -1}.get(e[i], 0)
        if depth == 0:
            return e[i + 1:].strip() == ""
    return False


def _typed_booleans(text: str) -> str:
    """``(EXPR AS ?v)`` and ``BIND(EXPR AS ?v)`` with a boolean EXPR, made a typed boolean:
    Virtuoso answers computed booleans as ``1``/``0`` of type xsd:integer, indistinguishable
    from numbers, but keeps the datatype of a typed literal (repaired by :meth:`term`)."""
    code = queries.code_only(text)
    edits: list[tuple[int, int]] = []
    for m in _AS.finditer(code):
        depth, i = 0, m.start() - 1
        while i >= 0:
            depth += {")": 1, "(": -1}.get(code[i], 0)
            if depth < 0:
                break
            i -= 1
        if i >= 0 and _is_boolean(code[i + 1:m.start()]):
            edits.append((i + 1, m.start()))
    for start, end in sorted(edits, reverse=True):   # innermost last is fine: spans are disjoint
        expr = text[start:end].rstrip()
        text = (f'{text[:start]}STRDT(IF({expr}, "true", "false"), {_XSD_BOOLEAN_IRI}) '
                f"{text[end:]}")
    return text


def check_concat(text: str) -> None:
    """StoreError for a query whose CONCAT Virtuoso 7.2 would garble (non-ASCII query text)."""
    if _CONCAT.search(queries.code_only(text)) and not text.isascii():
        raise StoreError("Virtuoso 7.2 garbles CONCAT when the query text holds non-ASCII "
                         "characters (stored text comes back as mojibake): give such strings a "
                         "language tag (\"…\"@he), build the string after the query, or use "
                         "another engine")


class VirtuosoDialect(Dialect):
    """OpenLink Virtuoso 7.2 (chosen by its ``Server: Virtuoso/…`` header)."""

    name = "virtuoso"
    atomic = False
    reserialise = True

    def read_query(self, text: str) -> str:
        check_concat(text)
        text = _typed_booleans(_graphs_listed(_plain_strings(text)))
        return _own_default_graph(text)

    def values_text(self, values: Values | None) -> str:
        if values is None or len(values.rows) <= 1 or len(values.variables) <= 1:
            return super().values_text(values)
        fixed = [i for i in range(len(values.variables))
                 if all(r[i] == values.rows[0][i] for r in values.rows)]
        varying = [i for i in range(len(values.variables)) if i not in fixed]
        blocks = []
        if fixed:
            blocks.append(values_block(Values(tuple(values.variables[i] for i in fixed),
                                              [tuple(values.rows[0][i] for i in fixed)])))
        rest = Values(tuple(values.variables[i] for i in varying),
                      [tuple(r[i] for i in varying) for r in values.rows])
        if len(varying) > 1 and any(isinstance(t, Literal) and t.language
                                    for r in rest.rows for t in r):
            if len(rest.rows) > MAX_UNION_ROWS:
                raise StoreError(
                    f"Virtuoso 7.2 drops language tags in a VALUES block of several variables; "
                    f"kg-rag sends such values as a UNION of at most {MAX_UNION_ROWS} rows, not "
                    f"{len(rest.rows)}: bind fewer rows per query")
            blocks.append(" UNION ".join("{ " + values_block(Values(rest.variables, [r])) + " }"
                                         for r in rest.rows))
        elif varying:
            blocks.append(values_block(rest))
        return "\n".join(blocks)

    def apply(self, execute: Callable[[str], None], change: Change) -> None:
        requests = self.update_requests(change)
        for i, text in enumerate(requests):
            try:
                execute(text)
            except (StoreError, QueryError) as e:
                raise StoreError(
                    f"{e} — Virtuoso does not roll a failed update back: the store may hold "
                    f"part of this change ({i} of {len(requests)} requests had succeeded); "
                    f"run the command again to complete it") from None

    def update_text(self, text: str) -> str:
        check_concat(text)
        return _plain_strings(text)

    def update_requests(self, change: Change) -> list[str]:
        default = NamedNode(DEFAULT_GRAPH)

        def mapped(quads: list[Quad]) -> list[Quad]:
            return [Quad(q.subject, q.predicate, q.object, default)
                    if isinstance(q.graph_name, DefaultGraph) else q for q in quads]

        delete, insert = mapped(change.delete), mapped(change.insert)
        if len(delete) + len(insert) <= MAX_UPDATE_QUADS:
            return [replace(change, delete=delete, insert=insert).render()]
        parts = [replace(change, delete=[], insert=[]).render()] if change.drop_graphs else []
        for k in range(0, len(delete), MAX_UPDATE_QUADS):
            parts.append(replace(change, drop_graphs=[], delete=delete[k:k + MAX_UPDATE_QUADS],
                                 insert=[]).render())
        for k in range(0, len(insert), MAX_UPDATE_QUADS):
            parts.append(replace(change, drop_graphs=[], delete=[],
                                 insert=insert[k:k + MAX_UPDATE_QUADS]).render())
        return parts

    def visible(self, row: dict[str, Any]) -> bool:
        return visible(row)

    def term(self, value: Any) -> Any:
        if isinstance(value, Literal):
            if value.datatype == XSD_BOOLEAN and value.value in ("1", "0"):
                return Literal("true" if value.value == "1" else "false", datatype=XSD_BOOLEAN)
            if value.datatype == XSD_DATETIME and "." in value.value:
                # Virtuoso pads fractions to milliseconds ("00.13Z" comes back "00.130Z"):
                # the canonical form, which is also what kg-rag writes
                fixed = _FRACTION.sub(lambda m: m.group(1).rstrip("0").rstrip("."), value.value)
                return Literal(fixed, datatype=XSD_DATETIME)
        return value

    def visible_triple(self, triple: Triple) -> bool:
        return not any(isinstance(t, NamedNode) and t.value.startswith(SYSTEM_PREFIXES)
                       for t in (triple.subject, triple.object))

    def store_endpoint(self, endpoint: str) -> str | None:
        base = endpoint.rstrip("/")
        if base.endswith("/sparql"):
            return base + "-graph-crud"
        return None


def _to_json(value: Any) -> dict[str, Any]:
    try:
        return json_term(value)
    except TypeError:
        raise StoreError(f"the endpoint answered a term kg-rag cannot write again: {value!r}") from None


def reserialise(body: bytes, media: str, fmt: str, dialect: Dialect) -> tuple[bytes, str]:
    """A user query's answer (SPARQL JSON or N-Triples from the engine) written again by
    pyoxigraph in ``fmt``, with the embedded store's fall-backs and the dialect's repairs."""
    from kg_rag.store.embedded import _GRAPH_FORMATS, _RESULT_FORMATS

    buf = io.BytesIO()
    if media in ("application/n-triples", "text/plain"):
        try:
            triples = [Triple(dialect.term(t.subject), t.predicate, dialect.term(t.object))
                       for t in pyoxigraph.parse(body, pyoxigraph.RdfFormat.N_TRIPLES)]
        except SyntaxError as e:
            raise StoreError(f"truncated or broken N-Triples from the endpoint: {e}") from None
        triples = [t for t in triples if dialect.visible_triple(t)]
        rdf_fmt, out_media = _GRAPH_FORMATS[fmt if fmt in _GRAPH_FORMATS else "turtle"]
        pyoxigraph.serialize(triples, buf, rdf_fmt)
        return buf.getvalue(), out_media
    answer = select_terms(body, dialect, "the query")
    if isinstance(answer, bool):
        doc: dict[str, Any] = {"head": {}, "boolean": answer}
    else:
        variables, rows = answer
        doc = {"head": {"vars": variables},
               "results": {"bindings": [{k: _to_json(v) for k, v in r.items()} for r in rows]}}
    res_fmt, out_media = _RESULT_FORMATS[fmt if fmt in _RESULT_FORMATS else "json"]
    parsed = pyoxigraph.parse_query_results(json.dumps(doc).encode("utf-8"),
                                            pyoxigraph.QueryResultsFormat.JSON)
    parsed.serialize(buf, res_fmt)
    return buf.getvalue(), out_media


def select_terms(body: bytes, dialect: Dialect, what: str) -> tuple[list[str], list[dict[str, Any]]] | bool:
    """Variables and rows (repaired terms) of a SPARQL JSON answer, or its boolean."""
    from kg_rag.store.remote import term_from_json

    try:
        data = json.loads(body)
    except ValueError:
        raise StoreError(f"{what}: the endpoint's JSON answer is truncated or broken") from None
    if not isinstance(data, dict):
        raise StoreError(f"{what}: the endpoint's answer is not a SPARQL JSON result")
    if "boolean" in data:
        return bool(data["boolean"])
    try:
        variables = [v for v in data["head"].get("vars", []) if v != STAR_FAKE]
        bindings = data["results"]["bindings"]
    except (KeyError, TypeError, AttributeError):
        raise StoreError(f"{what}: the endpoint's answer has no results") from None
    rows = [{k: dialect.term(term_from_json(v)) for k, v in b.items() if k != STAR_FAKE}
            for b in bindings]
    return variables, [r for r in rows if dialect.visible(r)]
