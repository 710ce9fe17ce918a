"""A remote SPARQL 1.1 endpoint (Query, Update, Graph Store Protocol) over HTTP.

Every call has a total deadline (:mod:`kg_rag.store.http`: an endpoint that drips its answer
cannot hold a request past it). An answer that is not a complete 200 (e.g. HTTP 206 partial
content), not of the media type asked for, or that says it was cut — Virtuoso's
``X-SQL-State: S1TAT`` (an anytime query's partial result) or an ``X-SPARQL-MaxRows`` header
(its result row cap) — raises :class:`StoreError`, never a short result.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Triple

from kg_rag.errors import QueryError, StoreError
from kg_rag.store import http as http_
from kg_rag.store import queries
from kg_rag.store.base import (
    GRAPH_FORMATS,
    Change,
    EngineHandler,
    Row,
    Store,
    T,
    UpdateRejected,
    _merge,
    check_user_query,
    update_refusal,
)
from kg_rag.store.dialect import Dialect, detect
from kg_rag.store.prologue import PROLOGUE, syntax_message
from kg_rag.store.prologue import predeclare as predeclare_prefixes
from kg_rag.store.render import Term, Values

log = logging.getLogger(__name__)

_MEDIA = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
    "turtle": "text/turtle",
    "ntriples": "application/n-triples",
    "nquads": "application/n-quads",
    "jsonld": "application/ld+json",
    "rdfxml": "application/rdf+xml",
}
CHUNK = 50_000  # quads per Graph Store Protocol request


def _derive(endpoint: str, last: str) -> str:
    if endpoint.rstrip("/").endswith("/query"):
        return endpoint.rstrip("/")[: -len("query")] + last
    return endpoint


_READ_FORM = re.compile(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", re.I)


def _read_form(text: str) -> str:
    """The form of a read query, from its code (not its comments, strings or IRIs)."""
    m = _READ_FORM.search(queries.code_only(text))
    return m.group(1).upper() if m else "SELECT"


def _blank(label: str) -> BlankNode:
    """A result's blank node: its label when that is a valid one, else a label derived from it
    (Virtuoso answers ``nodeID://b10000``, which is no blank node label) — the same label gives
    the same node, so joins across one answer still hold."""
    try:
        return BlankNode(label)
    except ValueError:
        return BlankNode("v" + hashlib.sha256(label.encode("utf-8")).hexdigest()[:24])


def term_from_json(b: dict[str, Any]) -> Any:
    t = b.get("type")
    v = b.get("value", "")
    if t == "uri":
        return NamedNode(v)
    if t == "bnode":
        return _blank(v)
    if t in ("literal", "typed-literal"):
        if "xml:lang" in b:
            return Literal(v, language=b["xml:lang"])
        if "datatype" in b:
            return Literal(v, datatype=NamedNode(b["datatype"]))
        return Literal(v)
    if t == "triple":
        val = b["value"]
        return Triple(term_from_json(val["subject"]), term_from_json(val["predicate"]),
                      term_from_json(val["object"]))
    raise StoreError(f"the endpoint answered an unknown term type {t!r}")


class RemoteStore(Store):
    kind = "remote"

    def __init__(self, endpoint: str, update_endpoint: str | None = None,
                 store_endpoint: str | None = None, timeout: float = 30.0,
                 read_only: bool = False, token: str | None = None,
                 dialect: Dialect | None = None) -> None:
        """``token``: sent as ``Authorization: Bearer`` with every request (a kg-rag service's
        updates need its ``KG_RAG_SERVICE_TOKEN``); ``dialect``: what the engine needs
        (kg_rag.store.dialect; None: chosen from the endpoint's Server header on first use)."""
        self.read_only = read_only
        self.token = token
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._dialect = dialect
        if not endpoint.startswith(("http://", "https://")):
            raise StoreError(f"--endpoint must be an http(s) URL, not {endpoint!r}")
        self.location = endpoint
        self.endpoint = endpoint
        self.update_endpoint = update_endpoint or _derive(endpoint, "update")
        self._store_endpoint = store_endpoint
        self.timeout = timeout

    @property
    def dialect(self) -> Dialect:
        """What this endpoint's engine needs (kg_rag.store.dialect), asked for once."""
        if self._dialect is None:
            self._dialect = detect(self.endpoint, self.timeout)
        return self._dialect

    @property
    def store_endpoint(self) -> str:
        return (self._store_endpoint or self.dialect.store_endpoint(self.endpoint)
                or _derive(self.endpoint, "store"))

    # --- protocol -------------------------------------------------------------------------
    def _post_form(self, url: str, field: str, text: str, accept: str) -> http_.Answer:
        body = urllib.parse.urlencode({field: text}).encode("ascii")
        headers = {"Accept": accept, "Content-Type": "application/x-www-form-urlencoded",
                   **self._auth}
        try:
            return http_.request("POST", url, body, headers, self.timeout)
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            raise StoreError(f"cannot reach {url} (timeout {self.timeout:g}s): "
                             f"{type(e).__name__}: {e}") from None

    def _request(self, text: str, accept: str, allowed: tuple[str, ...] | None = None,
                 user_text: str | None = None, shift: int = 0) -> tuple[bytes, str]:
        """POST a query; return the complete body and its media type.

        Anything but a complete HTTP 200 answer of an ``allowed`` media type (default: the first
        one of ``accept``) raises :class:`StoreError`.
        """
        text = self.dialect.read_query(text)
        ans = self._post_form(self.endpoint, "query", text, accept)
        if ans.status == 400:
            _malformed(ans, "query", user_text, shift)
            raise QueryError("the endpoint rejected the query: "
                             + _first_line(ans.body.decode("utf-8", "replace")))
        if ans.status in _REFUSED:
            raise refused(self.endpoint, ans, "the query", bool(self._auth))
        if ans.status != 200:
            raise StoreError(
                f"the endpoint {self.endpoint} answered HTTP {ans.status} instead of a complete "
                f"200 answer ({_first_line(ans.body.decode('utf-8', 'replace')) or 'no detail'}); "
                f"check the endpoint (partial answers are not used)")
        http_.check_complete(self.endpoint, ans)
        ctype = (ans.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        allowed = allowed or (accept.split(",")[0].split(";")[0].strip(),)
        if ctype not in allowed:
            raise StoreError(f"the endpoint {self.endpoint} answered {ctype or 'no media type'}, "
                             f"not {' or '.join(allowed)}")
        return ans.body, ctype

    def _json(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> dict[str, Any]:
        merged = _merge(bind, values)
        body, _ = self._request(q.with_values(self._values_text(merged)), _MEDIA["json"],
                                ("application/sparql-results+json", "application/json"))
        try:
            data = json.loads(body)
        except ValueError:
            raise StoreError(f"{q.name}: the endpoint's JSON answer is truncated or broken") from None
        if not isinstance(data, dict):
            raise StoreError(f"{q.name}: the endpoint's answer is not a SPARQL JSON result")
        return data

    def _select(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Row]:
        data = self._json(q, bind, values)
        try:
            bindings = data["results"]["bindings"]
        except (KeyError, TypeError):
            raise StoreError(f"{q.name}: the endpoint's answer has no results") from None
        fix, visible = self.dialect.term, self.dialect.visible
        rows = [{k: fix(term_from_json(v)) for k, v in b.items()} for b in bindings]
        return [r for r in rows if visible(r)]

    def _ask(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> bool:
        data = self._json(q, bind, values)
        if "boolean" not in data:
            raise StoreError(f"{q.name}: the endpoint's answer has no boolean")
        return bool(data["boolean"])

    def _construct(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Triple]:
        import pyoxigraph

        merged = _merge(bind, values)
        body, _ = self._request(q.with_values(self._values_text(merged)), _MEDIA["ntriples"],
                                ("application/n-triples", "text/plain"))
        try:
            fix, visible = self.dialect.term, self.dialect.visible_triple
            triples = (qd.triple for qd in pyoxigraph.parse(body, pyoxigraph.RdfFormat.N_TRIPLES))
            return [Triple(fix(t.subject), t.predicate, fix(t.object)) for t in triples if visible(t)]
        except SyntaxError as e:
            raise StoreError(f"{q.name}: truncated or broken N-Triples from the endpoint: {e}") from None

    def raw_query(self, text: str, fmt: str, predeclare: bool = False) -> tuple[bytes, str]:
        check_user_query(text)
        user_text = text
        # the endpoint takes no prefixes parameter: a one-line prologue, subtracted from errors
        shift = len(PROLOGUE) if predeclare else 0
        text = predeclare_prefixes(text) if predeclare else text
        if self.dialect.reserialise:   # the engine's own serialisation, written again by pyoxigraph
            from kg_rag.store.virtuoso import reserialise

            graph = _read_form(text) in ("CONSTRUCT", "DESCRIBE")
            media = _MEDIA["ntriples"] if graph else _MEDIA["json"]
            body, got = self._request(text, media, (media, "text/plain" if graph else "application/json"),
                                      user_text=user_text, shift=shift)
            return reserialise(body, got, fmt, self.dialect)
        # like the embedded store: a format that does not fit the query form falls back to
        # JSON results (SELECT/ASK) or Turtle (CONSTRUCT/DESCRIBE)
        if fmt in GRAPH_FORMATS:
            wanted, fallback = _MEDIA[fmt], _MEDIA["json"]
        else:
            wanted, fallback = _MEDIA.get(fmt, _MEDIA["json"]), _MEDIA["turtle"]
        return self._request(text, f"{wanted}, {fallback};q=0.1", (wanted, fallback),
                             user_text=user_text, shift=shift)

    def execute_update(self, text: str) -> None:
        self._send_update(text)

    def _user_update(self, text: str, base_iri: str | None) -> None:
        self._send_update(text, user_text=text)

    def _send_update(self, text: str, user_text: str | None = None) -> None:
        """POST an update; ``user_text``: a user's update, sent behind the predeclared prefixes'
        prologue (its syntax errors point into the user's text), and whose failure the engine
        blames on what it asks (``oxigraph serve`` answers HTTP 500 "The graph <…> does not
        exist") is a 400 :class:`UpdateRejected`, not a store failure."""
        self.check_writable()
        user = user_text is not None
        text = self.dialect.update_text(predeclare_prefixes(text) if user else text)
        ans = self._post_form(self.update_endpoint, "update", text, "*/*")
        if user and ans.status == 500:
            refusal = update_refusal(_first_line(ans.body.decode("utf-8", "replace")))
            if refusal:
                raise UpdateRejected(f"the endpoint refused the update: {refusal}")
        if ans.status == 400:   # a kg-rag service says why in a problem document's detail
            _malformed(ans, "update", user_text, len(PROLOGUE))
            raise QueryError(f"the endpoint rejected the update: {_reason(ans)}")
        if ans.status in _REFUSED:
            raise refused(self.update_endpoint, ans, "the update", bool(self._auth))
        if ans.status not in (200, 204):
            raise StoreError(f"the update endpoint {self.update_endpoint} answered HTTP "
                             f"{ans.status}; check the store, the update may not have been applied")

    def _values_text(self, values: Values | None) -> str:
        return self.dialect.values_text(values)

    def _apply(self, change: Change) -> None:
        if change:
            self.dialect.apply(self.execute_update, change)

    # --- Graph Store Protocol -------------------------------------------------------------
    def _gsp(self, method: str, graph: NamedNode, body: bytes | None) -> None:
        url = self.store_endpoint + "?" + urllib.parse.urlencode({"graph": graph.value})
        headers = {"Content-Type": "application/n-triples"} if body is not None else {}
        headers.update(self._auth)
        try:
            ans = http_.request(method, url, body, headers, self.timeout)
        except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
            raise StoreError(f"cannot reach {self.store_endpoint} (timeout {self.timeout:g}s): "
                             f"{type(e).__name__}: {e}") from None
        if method == "DELETE" and ans.status == 404:
            return
        if ans.status in _REFUSED:
            raise refused(self.store_endpoint, ans, f"Graph Store {method}", bool(self._auth))
        if ans.status in (404, 405, 501) and method != "DELETE":
            # no Graph Store Protocol there (a kg-rag serve has none): say what to do instead
            raise StoreError(f"{self.store_endpoint} takes no Graph Store Protocol {method} (HTTP "
                             f"{ans.status}), so files cannot be loaded through it: load them into "
                             f"the store before serving it (a kg-rag serve), or name the endpoint's "
                             f"graph store URL in KG_RAG_STORE_ENDPOINT")
        if ans.status not in (200, 201, 204):
            raise StoreError(f"Graph Store {method} {graph.value} failed: HTTP {ans.status}")

    def load_graph(self, graph: NamedNode, quads: Iterable[Quad],
                   progress: Callable[[int], None] | None = None) -> int:
        """PUT the first chunk, POST the rest. Blank-node labels are scoped to one request, so
        every triple with a blank node (or a triple term) goes into one last request together."""
        self.check_writable()
        n = 0
        first = True
        chunk: list[str] = []
        with_blanks: list[str] = []

        def flush(lines: list[str]) -> None:
            nonlocal first
            body = ("\n".join(lines) + "\n").encode("utf-8")
            self._gsp("PUT" if first else "POST", graph, body)
            first = False
            if progress and lines:
                progress(len(lines))
            lines.clear()

        try:
            for q in quads:
                line = f"{q.subject} {q.predicate} {q.object} ."
                if isinstance(q.subject, BlankNode | Triple) or isinstance(q.object, BlankNode | Triple):
                    with_blanks.append(line)
                else:
                    chunk.append(line)
                n += 1
                if len(chunk) >= CHUNK:
                    flush(chunk)
            if chunk:
                flush(chunk)
            if with_blanks or first:
                flush(with_blanks)
        except BaseException:
            try:
                self._gsp("DELETE", graph, None)
            except StoreError as e:   # one line: the error raised below is what to report
                log.error("could not remove the partly loaded graph %s: %s", graph.value, e)
            raise
        return n

    def on_engine(self, handler: EngineHandler[T]) -> T:
        return handler.remote(self.endpoint)

    def named_graphs(self) -> list[NamedNode]:
        rows = self.select("select-graph-names")
        graphs = [r["g"] for r in rows if isinstance(r.get("g"), NamedNode)]
        return sorted(graphs, key=lambda g: g.value)

    def __repr__(self) -> str:
        return f"RemoteStore({self.endpoint!r})"




#: statuses that are a refusal or an overload, not a broken endpoint: each says what to do
_REFUSED = (401, 403, 429, 503)


def _malformed(ans: http_.Answer, what: str, user_text: str | None, shift: int) -> None:
    """QueryError "malformed query/update: …" in the user's positions, when a 400 answer to a
    user's text is the engine's syntax error (``shift``: characters of prologue sent before it)."""
    full = ans.body.decode("utf-8", "replace")
    at = full.find("error at ")
    if user_text is not None and at >= 0:   # the engine's own words, one line
        detail = syntax_message(full[at:].rstrip("'\" \n"), user_text, shift)
        raise QueryError(f"malformed {what}: {detail}")


def _reason(ans: http_.Answer) -> str:
    """The first line of an error answer; of an RFC 9457 problem document (a kg-rag service),
    its detail."""
    text = ans.body.decode("utf-8", "replace")
    try:
        problem = json.loads(text)
        text = str(problem.get("detail") or problem.get("title") or "") if isinstance(problem, dict) else text
    except ValueError:
        pass
    return _first_line(text)


def refused(url: str, ans: http_.Answer, what: str, sent_token: bool) -> StoreError:
    """One line telling a refusal (401/403: the token) from an overload (429/503: retry later)."""
    detail = _reason(ans)
    detail = f" ({detail})" if detail else ""
    if ans.status in (401, 403):
        fix = ("the token sent was not accepted: check --token / KG_RAG_SERVICE_TOKEN"
               if sent_token else
               "send the endpoint's token with --token or KG_RAG_SERVICE_TOKEN, or ask without "
               "writing (ask/annotate --no-record)")
        return StoreError(f"{url} refused {what}: HTTP {ans.status}{detail}; {fix}")
    after = ans.headers.get("Retry-After")
    wait = f", retry after {after} s" if after and after.strip().isdigit() else ", retry later"
    return StoreError(f"{url} is overloaded and did not run {what}: HTTP {ans.status}{detail}"
                      f"{wait}")


def _first_line(text: str) -> str:
    return " ".join(text.strip().splitlines()[:1])[:300]

