"""Checks on query and update text from outside, BEFORE the engine sees it.

Used on every path that runs a user's SPARQL: the public ``/sparql`` endpoint, authenticated
updates, ``kg-rag sparql`` and :meth:`kg_rag.api.KnowledgeGraph.raw_query`/``update`` (through
:meth:`kg_rag.store.base.Store.raw_query`/``user_update``).

**Tokens.** The text is tokenised by the SPARQL 1.1 grammar's terminals (§19.8, longest match):
IRIs, the four kinds of string literal, comments, variables, language tags, blank node labels,
prefixed names (``PN_PREFIX``/``PN_LOCAL``), the numbers ``INTEGER``/``DECIMAL``/``DOUBLE`` (so
``1.SERVICE`` is ``1`` ``.`` ``SERVICE`` and ``5.e1SERVICE`` is ``5.e1`` ``SERVICE``), bare
keywords. A keyword inside a string, an IRI or a comment is not mistaken for one.

**Refused** (:class:`QueryRefused`, HTTP 403): anything the engine would read as ``SERVICE`` or
``LOAD`` — both make pyoxigraph fetch a URL. The engine's parser (a PEG over characters) matches
keywords with no word boundary, which was measured on pyoxigraph 0.5.13 (a loopback listener saw
the request): ``SERVICESILENT<…>``, ``SERVICEx:y {…}``, ``service:x {…}`` (``SERVICE`` + the
empty-prefix name ``:x``), ``LOADx:y``, ``loadsilent:x`` all fetch. So:

* a bare word that *contains* ``SERVICE`` or ``LOAD`` is refused (no keyword or function name
  does; ``trueSERVICE<…>{}`` is ``true`` + ``SERVICE`` to the engine);
* a prefixed name whose prefix contains ``SERVICE`` is refused when a group ``{`` follows it
  (the only place the engine can read it as ``SERVICE`` + name) unless a keyword that takes a
  graph name comes right before it (``GRAPH service:g {``); ``?s service:p ?o`` is fine;
* in updates, a prefixed name whose prefix contains ``LOAD`` is refused at the top level of an
  operation unless a keyword that takes a graph name comes right before it (``GRAPH load:g``).

Because the PEG reads ``<`` as "less than" where the grammar's tokens may see an IRI, IRI tokens
are scanned once more for a ``SERVICE``/``LOAD`` followed by what could name an endpoint, and an
IRI with an apostrophe (a string to the engine) makes the whole text scanned that way.

**Too large** (:class:`QueryTooLarge`, 413), **too deep** and **too long a chain**
(:class:`QueryError`, 400): the engine's parser and planner recurse once per bracket *and* once
per operator of a chain or pattern of a group (measured in a thread with an 8 MB stack: ``MINUS{}``
or ``BIND(…)`` ×4,000, ``UNION{}``/``OPTIONAL{}``/``+1`` ×8,000 crash the process with a native
stack overflow). So besides the bracket depth, the guard estimates the depth of the syntax tree:
along the open brackets, the sum of the operators of each expression chain (``! || && + - * / =
< > …``, signed numbers, path operators) and of the patterns of each group (``UNION OPTIONAL
MINUS FILTER BIND GRAPH SERVICE VALUES EXISTS``, adjacent ``{}{}``), and refuses more than
``max_chain``; every triple pattern of a group counts too (a basic graph pattern of 10,000
triple patterns crashed the engine, and its planner is super-linear: 100 patterns took 1.7 s,
200 took 10 s). Data blocks (``VALUES``, ``INSERT DATA``, ``DELETE DATA``, the templates of
``INSERT``/``DELETE``/``CONSTRUCT``) hold terms the engine reads as flat lists, so only their
brackets count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kg_rag.errors import QueryError

__all__ = ["DEFAULT_MAX_CHAIN", "QueryInfo", "QueryRefused", "QueryTooLarge", "Token",
           "check_query", "check_update", "tokens"]

DEFAULT_MAX_CHAIN = 1_000  # estimated syntax-tree depth; the engine crashed from ~4,000 (measured)


class QueryRefused(QueryError):
    """The text asks for something this process never does (fetching URLs)."""

    http_status = 403
    title = "query refused"


class QueryTooLarge(QueryError):
    http_status = 413
    title = "query too large"


# --- the grammar's terminals (SPARQL 1.1 Query Language §19.8) ------------------------------------
_BASE = ("A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D"
         "\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\U00010000-\U000EFFFF")
_U = _BASE + "_"
_CHARS = _U + r"\-0-9\u00B7\u0300-\u036F\u203F-\u2040"
_PLX = r"%[0-9A-Fa-f]{2}|\\[_~.\-!$&'()*+,;=/?#@%]"
_PN_PREFIX = rf"[{_BASE}](?:[{_CHARS}.]*[{_CHARS}])?"
_PN_LOCAL = rf"(?:[{_U}:0-9]|{_PLX})(?:(?:[{_CHARS}.:]|{_PLX})*(?:[{_CHARS}:]|{_PLX}))?"
_EXP = r"[eE][+-]?[0-9]+"
_TOKEN = re.compile(
    rf"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<iri><(?:[^<>"{{}}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{{4}}|\\U[0-9A-Fa-f]{{8}})*>)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''
              |\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
              |'(?:[^'\\\n\r]|\\.)*'
              |"(?:[^"\\\n\r]|\\.)*")
  | (?P<var>[?$][{_U}0-9][{_U}0-9\u00B7\u0300-\u036F\u203F-\u2040]*)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<bnode>_:[{_U}0-9](?:[{_CHARS}.]*[{_CHARS}])?)
  | (?P<pname>(?:{_PN_PREFIX})?:(?:{_PN_LOCAL})?)
  | (?P<number>[+-]?(?:[0-9]+\.[0-9]*{_EXP}|\.[0-9]+{_EXP}|[0-9]+{_EXP}|[0-9]*\.[0-9]+|[0-9]+))
  | (?P<word>[{_U}][{_U}0-9]*)
  | (?P<open>[{{(\[])
  | (?P<close>[}})\]])
  | (?P<punct>\^\^|&&|\|\||[<>!]=|.)
    """,
    re.VERBOSE | re.DOTALL,
)
_FORMS = ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE")
_UPDATE_OPS = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH")
_OUTBOUND = ("SERVICE", "LOAD")
# keywords right before a graph name at the top level of an update (``load:g`` is a name there)
_TAKES_GRAPH = frozenset({"PREFIX", "GRAPH", "WITH", "USING", "NAMED", "INTO", "TO", "SILENT",
                          "ADD", "MOVE", "COPY", "DEFAULT"})
_PATTERNS = frozenset({"UNION", "OPTIONAL", "MINUS", "FILTER", "BIND", "GRAPH", "SERVICE",
                       "VALUES", "EXISTS", "IN"})
_RESETS = frozenset({".", ",", ";"})
# SERVICE/LOAD followed by what could name an endpoint; used on IRI tokens (see module doc)
_HIDDEN = re.compile(r"(?<![?$@])(SERVICE|LOAD)(?:\s|\#[^\n]*\n)*(?:SILENT|[?$<]|[\w.\-]*:)",
                     re.IGNORECASE)


def _refused(word: str) -> QueryRefused:
    return QueryRefused(f"{word} is not allowed here: it would fetch data from another server")


def _outbound(word: str) -> str | None:
    """``SERVICE``/``LOAD`` when ``word`` contains it (case-insensitive), else None."""
    up = word.upper()
    for kw in _OUTBOUND:
        if kw in up:
            return kw
    return None


def _hidden(text: str) -> None:
    m = _HIDDEN.search(text)
    if m:
        raise _refused(m.group(1).upper())


@dataclass(frozen=True, slots=True)
class Token:
    kind: str       # ws comment iri string var lang bnode pname number word open close punct
    text: str
    start: int

    @property
    def keyword(self) -> str | None:
        """The upper-cased keyword when this is a bare word (not a prefixed name or number)."""
        return self.text.upper() if self.kind == "word" else None

    @property
    def prefix(self) -> str:
        """A prefixed name's prefix (``ex`` of ``ex:a``); empty for other tokens."""
        return self.text.partition(":")[0] if self.kind == "pname" else ""


def tokens(text: str) -> Iterator[Token]:
    """All tokens of ``text`` including whitespace and comments (every character is covered)."""
    for m in _TOKEN.finditer(text):
        yield Token(m.lastgroup or "punct", m.group(), m.start())


@dataclass(frozen=True, slots=True)
class QueryInfo:
    form: str                 # SELECT | ASK | CONSTRUCT | DESCRIBE | UPDATE
    depth: int                # deepest bracket nesting seen
    dataset_clauses: bool     # FROM / FROM NAMED (queries) or USING / WITH (updates) present


def _size(text: str, max_bytes: int) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise QueryTooLarge(f"the query is {size} bytes; at most {max_bytes} are accepted")


class _Chains:
    """The estimated depth of the syntax tree (see the module doc), checked as tokens come."""

    def __init__(self, max_chain: int) -> None:
        self.max = max_chain
        # per open bracket: [patterns, operators, data, group]; a data block (VALUES,
        # INSERT/DELETE DATA, an update's or CONSTRUCT's template) holds terms only, which the
        # engine reads as flat lists: nothing in it chains. In a group ({ or [) every triple
        # pattern is one more (a basic graph pattern of 10,000 crashed the engine)
        self.levels: list[list[int]] = [[0, 0, 0, 1]]
        self.total = 1

    def _bump(self, slot: int) -> None:
        self.levels[-1][slot] += 1
        self.total += 1
        if self.total > self.max:
            raise QueryError(f"the query chains more than {self.max} operators, patterns and "
                             f"brackets at one place (e.g. a long run of ! || + UNION OPTIONAL; "
                             f"the limit is KG_RAG_MAX_QUERY_CHAIN); split it into smaller "
                             f"queries")

    def _add(self, slot: int) -> None:
        if not self.levels[-1][2]:
            self._bump(slot)

    def open(self, bracket: str, adjacent_group: bool, data: bool) -> None:
        if adjacent_group:
            self._add(0)
        self.levels.append([0, 0, int(data or bool(self.levels[-1][2])), int(bracket != "(")])
        self._bump(0)   # the bracket itself, in data too

    def close(self) -> None:
        if len(self.levels) > 1:
            p, e, _, _ = self.levels.pop()
            self.total -= p + e

    def pattern(self) -> None:
        self._add(0)

    def operator(self) -> None:
        self._add(1)

    def separator(self, text: str) -> None:
        level = self.levels[-1]
        self.total -= level[1]
        level[1] = 0
        if len(self.levels) == 1:
            if text == ";":  # a new update operation
                self.total -= level[0]
                level[0] = 0
        elif level[3]:
            self._add(0)     # one more triple pattern of this group


def _scan(text: str, max_depth: int, max_chain: int, update: bool) -> tuple[list[Token], int]:
    depth = deepest = 0
    ambiguous = False
    data_next = False   # VALUES or DATA seen: the next group is a data block
    chains = _Chains(max_chain)
    significant: list[Token] = []
    for tok in tokens(text):
        kind = tok.kind
        if kind in ("ws", "comment"):
            continue
        prev = significant[-1] if significant else None
        if kind == "open":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > max_depth:
                    raise QueryError(f"the query nests brackets deeper than {max_depth} levels "
                                     f"(the limit is KG_RAG_MAX_QUERY_DEPTH); flatten it")
            template = (tok.text == "{" and prev is not None
                        and prev.keyword in ("INSERT", "DELETE", "CONSTRUCT"))
            chains.open(tok.text, tok.text == "{" and prev is not None and prev.text == "}",
                        data=(data_next and tok.text == "{") or template)
            if tok.text == "{":
                data_next = False
            if tok.text == "{" and prev is not None and prev.kind == "pname":
                before = significant[-2].keyword if len(significant) > 1 else None
                if "SERVICE" in prev.prefix.upper() and before not in _TAKES_GRAPH | {"FROM"}:
                    raise _refused("SERVICE")  # `service:x {` is SERVICE :x { to the engine
        elif kind == "close":
            depth = max(0, depth - 1)
            chains.close()
        elif kind == "word":
            word = _outbound(tok.text)
            if word is not None:
                raise _refused(word)
            if tok.text.upper() in _PATTERNS:
                chains.pattern()
            if tok.text.upper() in ("VALUES", "DATA"):
                data_next = True
        elif kind == "pname":
            if (update and depth == 0 and "LOAD" in tok.prefix.upper()
                    and (prev is None or prev.keyword not in _TAKES_GRAPH)):
                raise _refused("LOAD")  # `load:x` at an operation's start is LOAD :x
        elif kind == "iri":
            # a parser that reads this '<' as "less than" sees these characters as tokens
            _hidden(tok.text)
            ambiguous = ambiguous or "'" in tok.text
        elif kind == "number":
            if tok.text[0] in "+-":
                chains.operator()
        elif kind == "punct":
            if tok.text in _RESETS:
                chains.separator(tok.text)
            elif tok.text != "^^":
                chains.operator()
        significant.append(tok)
    if ambiguous:
        # an IRI with an apostrophe may be a comparison with a string to the engine, which then
        # ends strings where this tokeniser does not: scan everything, strings included
        _hidden(text)
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


def check_query(text: str, max_bytes: int, max_depth: int,
                max_chain: int = DEFAULT_MAX_CHAIN) -> QueryInfo:
    """Size, nesting, chains and refused keywords of a query; its form (SELECT/ASK/…)."""
    _size(text, max_bytes)
    toks, deepest = _scan(text, max_depth, max_chain, update=False)
    i = _prologue_end(toks)
    form = toks[i].keyword if i < len(toks) else None
    if form not in _FORMS:
        if form in _UPDATE_OPS:
            raise QueryError("this is an update: send it as 'update=' or application/sparql-update")
        raise QueryError("malformed query: expected SELECT, ASK, CONSTRUCT or DESCRIBE")
    dataset = any(t.keyword == "FROM" for t in toks)
    return QueryInfo(str(form), deepest, dataset)


def check_update(text: str, max_bytes: int, max_depth: int,
                 max_chain: int = DEFAULT_MAX_CHAIN) -> QueryInfo:
    """Size, nesting, chains and refused keywords (LOAD, SERVICE) of an update."""
    _size(text, max_bytes)
    toks, deepest = _scan(text, max_depth, max_chain, update=True)
    dataset = any(t.keyword in ("USING", "WITH") for t in toks)
    return QueryInfo("UPDATE", deepest, dataset)
