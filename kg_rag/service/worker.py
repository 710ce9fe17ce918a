"""Where public SPARQL queries run: somewhere they can be stopped.

pyoxigraph cannot cancel a query from Python, and a pathological query can crash its native
stack. So each query of the public ``/sparql`` endpoint runs in a **forked child** of the service
(:class:`ForkExecutor`): the child sees the store exactly as it is at that moment (in memory or on
disk — the parent keeps owning it), has no network, a memory cap and a lower CPU priority
(:mod:`.sandbox`), serialises at most ``max_rows`` rows into a pipe and exits. At the deadline the
parent kills it (SIGKILL) — that really stops the query. A crash kills only the child. The
children are forked ahead of time and reused (:mod:`.pool`; over a writable store, those forked
before a write are retired unused), with the same deadline, limits, answers and errors.

This executor is the endpoint's own: the REST pipeline never waits for it, so an endless query
from outside costs one slot and one core for ``query_timeout`` seconds, not the service.

With a remote store (:class:`RemoteExecutor`) the query is forwarded over HTTP with the same
deadline; the row cap is applied to the answer.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
from dataclasses import dataclass
from typing import Protocol

import pyoxigraph
from pyoxigraph import QueryBoolean, QuerySolutions

import kg_rag.store.http as remote_http
from kg_rag.errors import QueryError, StoreError
from kg_rag.service import sandbox
from kg_rag.service.results import MAX_RESULT_BYTES, write_boolean, write_solutions, write_triples
from kg_rag.store.embedded import user_query
from kg_rag.store.prologue import PROLOGUE, predeclare, syntax_message

log = logging.getLogger(__name__)

CHILD_MEMORY_BYTES = 2 * 1024**3   # how much more address space a query child may take


class QueryTimeout(StoreError):
    http_status = 503
    title = "query timeout"


class QueryCrashed(StoreError):
    http_status = 500
    title = "query failed"


@dataclass(frozen=True, slots=True)
class QueryJob:
    text: str
    fmt: str                                  # result format name (see results.FORMATS)
    default_graphs: tuple[str, ...] | None    # protocol default-graph-uri (None: not given)
    named_graphs: tuple[str, ...] | None      # protocol named-graph-uri
    base_iri: str | None
    max_rows: int
    #: no dataset in the request nor the query (FROM): the default graph is the union of all
    #: graphs, where the engine can do it (:attr:`ForkExecutor.union_default`)
    union_default: bool = False


@dataclass(frozen=True, slots=True)
class QueryAnswer:
    body: bytes
    fmt: str
    truncated: bool


def evaluate(store: pyoxigraph.Store, job: QueryJob) -> QueryAnswer:
    """Run ``job`` on ``store`` in THIS process and serialise the answer (used by the child)."""
    res = user_query(store, job.text, base_iri=job.base_iri, default_graphs=job.default_graphs,
                     named_graphs=job.named_graphs, union_default=job.union_default,
                     predeclare=True)
    if isinstance(res, QueryBoolean):
        return QueryAnswer(write_boolean(bool(res), job.fmt), job.fmt, False)
    if isinstance(res, QuerySolutions):
        names = [v.value for v in res.variables]
        rows = ([sol[n] for n in names] for sol in res)
        body, truncated = write_solutions(names, rows, job.fmt, job.max_rows)
        return QueryAnswer(body, job.fmt, truncated)
    body, truncated = write_triples(res, job.fmt, job.max_rows)
    return QueryAnswer(body, job.fmt, truncated)


def report(store: pyoxigraph.Store, job: QueryJob) -> bytes:
    """What a query child sends its parent for ``job``: one JSON head line, then the body."""
    head: dict[str, object]
    try:
        ans = evaluate(store, job)
        head = {"ok": True, "truncated": ans.truncated, "length": len(ans.body)}
        body = ans.body
    except QueryError as e:   # one line already, its position in the user's text
        head = {"ok": False, "kind": "syntax",
                "message": str(e).removeprefix("malformed query: ")}
        body = b""
    except MemoryError:
        head, body = {"ok": False, "kind": "memory", "message": "out of memory"}, b""
    except OSError as e:
        head, body = {"ok": False, "kind": "evaluation", "message": str(e)}, b""
    except Exception as e:  # noqa: BLE001 - reported to the parent, which raises
        head, body = {"ok": False, "kind": "internal", "message": type(e).__name__}, b""
    return json.dumps(head).encode() + b"\n" + body


def _child(store: pyoxigraph.Store, job: QueryJob, w: int,
           parent: int) -> None:  # pragma: no cover - child
    code = 0
    try:
        sandbox.enter(parent, CHILD_MEMORY_BYTES)
        sandbox.write_all(w, report(store, job))
    except BaseException:  # noqa: BLE001 - a child must never return into the server
        code = 70
    finally:
        os._exit(code)


def decode(data: bytes, fmt: str, status: int) -> QueryAnswer:
    """The answer in a child's report ``data``, or the error it stands for; ``status``: the
    child's wait status once it exited (0 for a pooled child that sent a whole report and lives
    on, :mod:`.pool`)."""
    head_line, _, body = data.partition(b"\n")
    try:
        head = json.loads(head_line) if head_line else None
    except ValueError:
        head = None
    if not isinstance(head, dict):
        how = sandbox.how_it_ended(status)
        log.warning("a query child died (%s)", how)
        raise QueryCrashed(f"the query crashed the engine ({how}); it was stopped, the "
                           f"service is fine — simplify the query")
    if head.get("ok"):
        if head.get("length") != len(body) or status != 0:
            raise QueryCrashed("the query's worker died while sending the answer; retry")
        return QueryAnswer(body, fmt, bool(head.get("truncated")))
    kind, message = head.get("kind"), " ".join(str(head.get("message", "")).split())
    if kind == "syntax":
        raise QueryError(f"malformed query: {message}")
    if kind == "evaluation":
        raise QueryError(f"the query failed: {message}")
    if kind == "memory":
        raise QueryCrashed("the query needed too much memory and was stopped; narrow it down")
    raise QueryCrashed(f"the query failed inside the engine ({message})")


def timed_out(timeout: float) -> QueryTimeout:
    return QueryTimeout(f"the query ran longer than {timeout:g} s and was stopped; "
                        f"narrow it down or add a LIMIT")


def too_large() -> QueryCrashed:
    return QueryCrashed("the query's answer grew past the size limit and was stopped")


class ForkExecutor:
    """Run each query in a forked, killable child of this process (see the module doc)."""

    #: the engine can make the default graph the union of the named graphs
    union_default = True

    def __init__(self, store: pyoxigraph.Store, timeout: float) -> None:
        self.store = store
        self.timeout = timeout

    def run(self, job: QueryJob) -> QueryAnswer:
        parent = os.getpid()
        pid, r = sandbox.spawn(lambda w: _child(self.store, job, w, parent))
        try:
            # the child caps its output; twice that is the backstop
            data, how = sandbox.read_report(r, self.timeout, 2 * MAX_RESULT_BYTES)
            if how == "late":
                raise timed_out(self.timeout)
            if how == "large":
                raise too_large()
        except BaseException:
            sandbox.reap(pid)
            raise
        finally:
            os.close(r)
        _, status = os.waitpid(pid, 0)
        return decode(data, job.fmt, status)


class RemoteExecutor:
    """Forward queries to a remote SPARQL endpoint with a deadline; cap the rows of the answer.

    The default graph is the endpoint's own (``oxigraph serve --union-default-graph`` makes it
    the union); the standard prefixes go in front of the query's first line."""

    union_default = False

    def __init__(self, endpoint: str, timeout: float) -> None:
        self.endpoint = endpoint
        self.timeout = timeout

    def run(self, job: QueryJob) -> QueryAnswer:
        graph = job.fmt not in ("json", "xml", "csv", "tsv")
        accept = "application/n-triples" if graph else "application/sparql-results+json"
        form: list[tuple[str, str]] = [("query", predeclare(job.text))]
        form += [("default-graph-uri", g) for g in job.default_graphs or ()]
        form += [("named-graph-uri", g) for g in job.named_graphs or ()]
        try:   # the timeout is a total deadline: an endpoint that drips its answer is stopped
            ans = remote_http.request("POST", self.endpoint, _urlencode(form),
                                      {"Accept": accept,
                                       "Content-Type": "application/x-www-form-urlencoded"},
                                      self.timeout)
        except remote_http.DeadlineExceeded:
            raise QueryTimeout(f"the endpoint did not answer within {self.timeout:g} s") from None
        except (OSError, http.client.HTTPException) as e:
            raise StoreError(f"cannot reach {self.endpoint}: {type(e).__name__}") from None
        resp = _Resp(ans.status, ans.body)
        if resp.status_code == 200:
            remote_http.check_complete(self.endpoint, ans)   # partial 200s are errors
        if resp.status_code == 400:
            raise QueryError(f"malformed query: "
                             f"{syntax_message(resp.text.strip(), job.text, len(PROLOGUE))}")
        if resp.status_code != 200:
            raise StoreError(f"the endpoint answered HTTP {resp.status_code}")
        try:
            if graph:
                quads = pyoxigraph.parse(resp.content, pyoxigraph.RdfFormat.N_TRIPLES)
                body, truncated = write_triples((q.triple for q in quads), job.fmt, job.max_rows)
                return QueryAnswer(body, job.fmt, truncated)
            res = pyoxigraph.parse_query_results(resp.content, pyoxigraph.QueryResultsFormat.JSON)
        except SyntaxError as e:
            raise StoreError(f"the endpoint's answer is broken or truncated: {e}") from None
        if isinstance(res, QueryBoolean):
            return QueryAnswer(write_boolean(bool(res), job.fmt), job.fmt, False)
        names = [v.value for v in res.variables]
        body, truncated = write_solutions(names, ([s[n] for n in names] for s in res),
                                          job.fmt, job.max_rows)
        return QueryAnswer(body, job.fmt, truncated)


@dataclass(frozen=True, slots=True)
class _Resp:
    status_code: int
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


def _urlencode(form: list[tuple[str, str]]) -> bytes:
    from urllib.parse import urlencode

    return urlencode(form).encode("ascii")


class Executor(Protocol):
    """What runs the endpoint's public queries: :class:`ForkExecutor`, :class:`RemoteExecutor`
    or :class:`.pool.QueryPool`."""

    #: the default graph of a query that names no dataset can be the union of the graphs
    union_default: bool

    def run(self, job: QueryJob) -> QueryAnswer: ...


__all__ = ["Executor", "ForkExecutor", "QueryAnswer", "QueryCrashed", "QueryJob", "QueryTimeout",
           "RemoteExecutor", "decode", "evaluate", "report"]
