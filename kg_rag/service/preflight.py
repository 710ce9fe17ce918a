"""An authenticated update is tried once in a forked, sandboxed, killable child before the
service applies it.

The guard (:mod:`kg_rag.store.guard`) refuses the update texts known to overflow the engine's
parser, but it estimates; the service applies updates in its own process, where such an
overflow (a native stack overflow, SIGSEGV) would end the service. So :func:`preflight` first
forks a child (:mod:`.sandbox`: no network, a memory cap, a lower priority, dies with the
service) that parses and runs the update against an **empty in-memory store** — never the
service's store, which the child could damage — and waits for it at most ``timeout`` seconds:

* the child is killed by a signal (the parser crashed) or runs out of memory →
  :class:`UpdateRefused` (400); nothing was written, the service is fine;
* the child is still busy at the deadline (parsing and planning alone take that long) →
  it is killed, :class:`UpdateTimeout` (503);
* the update is malformed → :class:`~kg_rag.errors.QueryError` (400), the engine's message;
* otherwise the update may be applied. An error that comes from the empty store (``DROP GRAPH``
  of a graph it lacks) says nothing about the real one and is ignored.

The child runs the update in the thread it was forked from — a copy of the thread that then
applies the update in the service — with the lower **half** of that thread's stack made
inaccessible (:func:`.sandbox.halve_stack`): an update that only just fits in the child has
twice that room in the service. The parser's recursion depth grows linearly with the stack
(measured on pyoxigraph 0.5.13: ``UNION{}`` ×1,628 at 2 MiB, ×3,266 at 4 MiB, ×6,543 at 8 MiB;
``MINUS{}`` ×1,305 at 4 MiB), and the guard lets at most ``KG_RAG_MAX_QUERY_CHAIN`` = 1,000
through, so nothing it accepts is refused here. (A new thread with a smaller stack would not do:
glibc may hand it a cached stack up to four times larger.)
"""

from __future__ import annotations

import json
import logging
import os
import signal

import pyoxigraph

from kg_rag.errors import QueryError, StoreError
from kg_rag.service import sandbox
from kg_rag.store.prologue import PREFIX_IRIS, syntax_message

log = logging.getLogger(__name__)

CHILD_MEMORY_BYTES = 1024**3     # how much more address space the checking child may take
_MAX_REPORT = 65_536             # the child's report is one short JSON line
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL,
                      signal.SIGFPE})


class UpdateRefused(QueryError):
    """The update crashed (or exhausted) the engine in the checking child: the text is at fault."""

    title = "update refused"


class UpdateTimeout(StoreError):
    title = "update timeout"


class UpdateCheckFailed(StoreError):
    http_status = 500
    title = "update check failed"


def _try(text: str, base_iri: str | None) -> dict[str, object]:  # pragma: no cover - child
    try:
        pyoxigraph.Store().update(text, base_iri=base_iri, prefixes=PREFIX_IRIS)
    except SyntaxError as e:
        return {"ok": False, "kind": "syntax", "message": str(e)[:2_000]}
    except MemoryError:
        return {"ok": False, "kind": "memory"}
    except Exception as e:  # noqa: BLE001 - an error of the EMPTY store: says nothing of the real one
        return {"ok": True, "note": type(e).__name__}
    return {"ok": True}


def _child(text: str, base_iri: str | None, w: int, parent: int) -> None:  # pragma: no cover
    code = 0
    try:
        sandbox.enter(parent, CHILD_MEMORY_BYTES)
        sandbox.halve_stack()
        sandbox.write_all(w, json.dumps(_try(text, base_iri)).encode())
    except BaseException:  # noqa: BLE001 - a child must never return into the server
        code = 70
    finally:
        os._exit(code)


def preflight(text: str, base_iri: str | None, timeout: float) -> None:
    """Parse and run ``text`` once on an empty store in a forked child (see the module doc);
    raise when applying it in this process would not be safe."""
    parent = os.getpid()
    pid, r = sandbox.spawn(lambda w: _child(text, base_iri, w, parent))
    try:
        data, how = sandbox.read_report(r, timeout, _MAX_REPORT)
    except BaseException:
        sandbox.reap(pid)
        raise
    finally:
        os.close(r)
    if how == "late":
        sandbox.reap(pid)
        raise UpdateTimeout(f"the update took longer than {timeout:g} s to check and was not "
                            f"applied (nothing was written); split it into smaller updates")
    _, status = os.waitpid(pid, 0)
    _judge(data, status, text)


def _judge(data: bytes, status: int, text: str) -> None:
    try:
        report = json.loads(data) if data else None
    except ValueError:
        report = None
    if not isinstance(report, dict):
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) in _CRASHES:
            name = signal.Signals(os.WTERMSIG(status)).name
            log.warning("an update crashed its checking child (%s); it was not applied", name)
            raise UpdateRefused(f"the update crashed the SPARQL engine's parser in a checking "
                                f"process ({name}) and was not applied (nothing was written; "
                                f"the service is fine); simplify it or split it")
        how = sandbox.how_it_ended(status)
        log.warning("an update's checking child died (%s)", how)
        raise UpdateCheckFailed(f"the update could not be checked (its checking process ended: "
                                f"{how}) and was not applied; retry")
    if report.get("ok"):
        return
    kind = report.get("kind")
    if kind == "syntax":
        raise QueryError(f"malformed update: {syntax_message(str(report.get('message', '')), text)}")
    if kind == "memory":
        raise UpdateRefused(f"the update needed more than {CHILD_MEMORY_BYTES >> 30} GiB of memory "
                            f"to check and was not applied (nothing was written); split it")
    raise UpdateCheckFailed("the update could not be checked and was not applied; retry")


__all__ = ["UpdateCheckFailed", "UpdateRefused", "UpdateTimeout", "preflight"]
