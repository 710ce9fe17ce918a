"""The SPARQL 1.1 Protocol endpoint: ``/sparql`` (query, and update when enabled) and
``/sparql/update``.

Query by GET (``?query=``), POST form (``query=``) or POST ``application/sparql-query``;
``default-graph-uri``/``named-graph-uri`` define the dataset. Update by POST form (``update=``) or
``application/sparql-update`` with ``using-graph-uri``/``using-named-graph-uri``; updates are off
unless the service was started with ``--allow-updates``, and then need
``Authorization: Bearer <KG_RAG_SERVICE_TOKEN>``.

Every query is checked by :mod:`.guard` before anything runs, then runs in the endpoint's own
killable executor (:mod:`.worker`) with a deadline and a row cap (``X-KG-RAG-Truncated: true``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs

import anyio
from pyoxigraph import NamedNode
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from kg_rag.errors import InputError, KgRagError, QueryError
from kg_rag.service.bodies import (
    UnsupportedMediaType,
    media_type,
    parameters,
    read_body,
    require_utf8_charset,
    utf8,
)
from kg_rag.service.description import service_description
from kg_rag.service.guard import add_using, check_query, check_update
from kg_rag.service.problems import from_error, problem
from kg_rag.service.results import KIND_OF_FORM, negotiate, write_triples
from kg_rag.service.results import media_type as result_media_type
from kg_rag.service.sparql_page import EXAMPLES, query_form_page, wants_html
from kg_rag.service.worker import Executor, QueryJob, QueryTimeout
from kg_rag.settings import Settings
from kg_rag.store.prologue import PREDECLARED
from kg_rag.store.render import term

log = logging.getLogger(__name__)

FORM = "application/x-www-form-urlencoded"
QUERY = "application/sparql-query"
UPDATE = "application/sparql-update"
ADMISSION_WAIT = 2.0  # seconds a query may wait for a free executor slot before a 503


class Unauthorized(KgRagError):
    http_status = 401
    title = "unauthorized"
    problem_headers = {"WWW-Authenticate": 'Bearer realm="kg-rag"'}


class Forbidden(KgRagError):
    http_status = 403
    title = "forbidden"


class NotAcceptable(KgRagError):
    http_status = 406
    title = "not acceptable"


class Busy(KgRagError):
    http_status = 503
    title = "busy"
    problem_headers = {"Retry-After": "1"}


@dataclass(frozen=True, slots=True)
class Operation:
    kind: str                       # query | update
    text: str
    params: dict[str, list[str]]    # protocol parameters (URL and form together)


class SparqlService:
    """State of the endpoint: settings, its executor, the update function, the admission slots."""

    def __init__(self, config: Settings, executor: Executor,
                 update: Callable[[str, str | None], None], slots: int = 4) -> None:
        self.config = config
        self.executor = executor
        self.update = update
        self.slots = asyncio.Semaphore(slots)
        self.limiter = anyio.CapacityLimiter(slots)

    # --- HTTP ------------------------------------------------------------------------------
    async def sparql(self, request: Request) -> Response:
        return await self._handle(request, update_only=False)

    async def sparql_update(self, request: Request) -> Response:
        return await self._handle(request, update_only=True)

    async def _handle(self, request: Request, update_only: bool) -> Response:
        try:
            allow = "POST" if update_only else "GET, HEAD, POST"
            if request.method == "OPTIONS":
                return Response(status_code=204, headers={"Allow": allow})
            if request.method not in ("GET", "POST", "HEAD"):
                return problem(405, "method not allowed", f"use {allow}", {"Allow": allow})
            if (request.method in ("GET", "HEAD") and not update_only
                    and not {"query", "update"} & set(request.query_params)):
                if wants_html(request.headers.get("accept")):
                    return self._form(request)
                return self._description(request)
            op = await self._operation(request, update_only)
            if op.kind == "update":
                return await self._run_update(request, op)
            return await self._run_query(request, op)
        except KgRagError as e:
            return from_error(e)

    async def _operation(self, request: Request, update_only: bool) -> Operation:
        params = parse_qs(request.url.query, keep_blank_values=True)
        if request.method in ("GET", "HEAD"):
            if "update" in params:
                raise _MethodNotAllowed("an update must be sent with POST")
            if update_only:
                raise _MethodNotAllowed("send updates to this endpoint with POST")
            return Operation("query", _one(params, "query"), params)
        mtype, mparams = media_type(request)
        limit = 3 * max(self.config.max_query_bytes, 1) + 65_536
        if mtype == FORM:
            body = utf8(await read_body(request, limit), "form body")
            form: dict[str, list[str]] = {}
            for k, v in parameters(body, "form"):   # strictly: %FF is no U+FFFD
                form.setdefault(k, []).append(v)
                params.setdefault(k, []).append(v)
            if "query" in form and "update" in form:
                raise InputError("send either 'query' or 'update', not both")
            if "update" in form:
                return Operation("update", _one(params, "update"), params)
            if update_only:
                raise InputError("missing 'update' parameter")
            return Operation("query", _one(params, "query"), params)
        if mtype == QUERY and not update_only:
            require_utf8_charset(mparams)
            return Operation("query", utf8(await read_body(request, limit), "query"), params)
        if mtype == UPDATE:
            require_utf8_charset(mparams)
            return Operation("update", utf8(await read_body(request, limit), "update"), params)
        wanted = f"{FORM} or {UPDATE}" if update_only else f"{FORM}, {QUERY} or {UPDATE}"
        raise UnsupportedMediaType(f"POST a body of type {wanted}, not {mtype or 'no type'}")

    def _form(self, request: Request) -> Response:
        """The query form for a browser; ``?example=N`` fills it with example N."""
        example = request.query_params.get("example", "")
        text = ""
        if example.isdigit() and int(example) < len(EXAMPLES):
            text = EXAMPLES[int(example)][1]
        return HTMLResponse(query_form_page(text, PREDECLARED), headers={"Vary": "Accept"})

    def _description(self, request: Request) -> Response:
        fmt = negotiate(request.headers.get("accept"), "graph")
        if fmt is None:
            raise NotAcceptable("the service description is RDF: accept text/turtle or another "
                                "RDF format")
        triples = service_description(_base(request), self.config.allow_updates,
                                      self.config.max_rows, self.config.query_timeout,
                                      union_default=self.executor.union_default)
        body, _ = write_triples(triples, fmt.name, len(triples))
        return Response(body, media_type=result_media_type(fmt.name), headers={"Vary": "Accept"})

    # --- queries ---------------------------------------------------------------------------
    async def _run_query(self, request: Request, op: Operation) -> Response:
        for name in ("using-graph-uri", "using-named-graph-uri"):
            if name in op.params:
                raise InputError(f"{name} belongs to updates; use default-graph-uri for queries")
        info = check_query(op.text, self.config.max_query_bytes, self.config.max_query_depth,
                           self.config.max_query_chain)
        kind = KIND_OF_FORM[info.form]
        fmt_param = op.params["format"][-1] if op.params.get("format") else None
        fmt = negotiate(request.headers.get("accept"), kind, fmt_param)
        if fmt is None:
            raise NotAcceptable(f"a {info.form} result cannot be given as "
                                f"{fmt_param or request.headers.get('accept')}")
        default_graphs = _graphs(op.params, "default-graph-uri")
        named_graphs = _graphs(op.params, "named-graph-uri")
        # no dataset named (request or FROM): the default graph is the union of the graphs
        union = (self.executor.union_default and default_graphs is None and named_graphs is None
                 and not info.dataset_clauses)
        job = QueryJob(
            text=op.text, fmt=fmt.name, default_graphs=default_graphs, named_graphs=named_graphs,
            base_iri=_base(request), max_rows=self.config.max_rows, union_default=union,
        )
        acquired = False
        with anyio.move_on_after(ADMISSION_WAIT):
            await self.slots.acquire()
            acquired = True
        if not acquired:
            raise Busy("all query slots are taken by running queries; retry in a moment")
        try:
            answer = await anyio.to_thread.run_sync(self.executor.run, job, limiter=self.limiter)
        finally:
            self.slots.release()
        headers = {"Vary": "Accept"}
        if answer.truncated:
            headers["X-KG-RAG-Truncated"] = "true"
            headers["X-KG-RAG-Max-Rows"] = str(self.config.max_rows)
        body = b"" if request.method == "HEAD" else answer.body
        return Response(body, media_type=result_media_type(answer.fmt), headers=headers)

    # --- updates ---------------------------------------------------------------------------
    async def _run_update(self, request: Request, op: Operation) -> Response:
        if not self.config.allow_updates:
            raise Forbidden("updates are disabled on this endpoint; start 'kg-rag serve "
                            "--allow-updates' with KG_RAG_SERVICE_TOKEN set to enable them")
        check_token(request, self.config.service_token)
        for name in ("default-graph-uri", "named-graph-uri"):
            if name in op.params:
                raise InputError(f"{name} belongs to queries; use using-graph-uri for updates")
        info = check_update(op.text, self.config.max_query_bytes, self.config.max_query_depth,
                            self.config.max_query_chain)
        text = op.text
        using = _graphs(op.params, "using-graph-uri")
        using_named = _graphs(op.params, "using-named-graph-uri")
        if using is not None or using_named is not None:
            if info.dataset_clauses:
                raise InputError("the update names its dataset (USING/WITH) and the request does "
                                 "too (using-graph-uri/using-named-graph-uri): use only one")
            text = add_using(text, [term(NamedNode(g)) for g in using or ()],
                             [term(NamedNode(g)) for g in using_named or ()])
        await anyio.to_thread.run_sync(self.update, text, _base(request))
        return Response(status_code=204)

    def routes(self) -> list[Route]:
        methods = ["GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]
        return [
            Route("/sparql", self.sparql, methods=methods),
            Route("/sparql/", self.sparql, methods=methods),
            Route("/sparql/update", self.sparql_update, methods=methods),
        ]


class _MethodNotAllowed(KgRagError):
    http_status = 405
    title = "method not allowed"
    problem_headers = {"Allow": "POST"}


def check_token(request: Request, token: str | None) -> None:
    """Bearer token check (constant time); 401 with ``WWW-Authenticate`` otherwise."""
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    if not token:
        raise Forbidden("no KG_RAG_SERVICE_TOKEN is configured, so writes are refused")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
        raise Unauthorized("send 'Authorization: Bearer <KG_RAG_SERVICE_TOKEN>' to write")


def _one(params: dict[str, list[str]], name: str) -> str:
    values = params.get(name, [])
    if not values:
        raise InputError(f"missing '{name}' parameter")
    if len(values) > 1:
        raise InputError(f"send exactly one '{name}' parameter, not {len(values)}")
    return values[0]


def _graphs(params: dict[str, list[str]], name: str) -> tuple[str, ...] | None:
    if name not in params:
        return None
    out = []
    for g in params[name]:
        try:
            NamedNode(g)
        except ValueError:
            raise InputError(f"{name} {g!r} is not an absolute IRI") from None
        out.append(g)
    return tuple(out)


def _base(request: Request) -> str:
    return str(request.url.replace(query="", fragment=""))


__all__ = ["Busy", "NotAcceptable", "QueryError", "QueryTimeout", "SparqlService", "check_token"]
