"""Public SPARQL queries in pre-forked, recycled children (issue 21).

:class:`~.worker.ForkExecutor` forks a child per query, and the fork of the service process is
most of what a simple query costs. :class:`QueryPool` forks ``size`` children ahead of time,
each under the same limits (:func:`.sandbox.enter`: no network, a memory cap, a lower priority,
dies with the service), and each looping: read one job from its pipe, run it on its copy of the
store (:func:`.worker.report`), write the report back. The parent hands a job to an idle child
and keeps the hard deadline: a child still busy at the deadline is killed (SIGKILL) and
replaced, and so is one that crashed, sent too much, failed inside the engine or out of memory,
or has answered :data:`MAX_QUERIES` queries. Answers and errors are the per-query child's own,
byte for byte (the same :func:`.worker.report` and :func:`.worker.decode`).

**Children forked before a write are retired.** A forked child sees the store as it was at the
fork (the engine's files and caches of that moment, an in-memory store's pages then), so a child
forked before a write would answer as if it had not happened. Over a writable store the pool is
given the store's write counter (:attr:`~kg_rag.store.embedded.EmbeddedStore.writes`, bumped when
a write starts and when it ends) and its write lock: a child is forked under the lock (never in
the middle of a write) and remembers the counter; a child whose counter is no longer the store's
is retired instead of being handed a query, and the keeper forks a current one. A service that
writes often therefore forks about as often as before; one that writes rarely (the usual case:
recording is off by default) answers from the pool. Over a read-only store
(``kg-rag serve --read-only``) nothing changes after a fork.

A query that finds no child idle within ``wait`` seconds, or at once when every child has been
busy for longer than that (e.g. with queries that run to the deadline), takes a child of its own
(:class:`~.worker.ForkExecutor`), as does every query once the pool is closed: slow queries
cannot make the quick ones queue behind them.

Children are forked by one long-lived thread of the pool (:meth:`QueryPool._keep`), because a
child dies with the *thread* that forked it (``PR_SET_PDEATHSIG``) and the service's worker
threads come and go; that thread replaces every child that is retired.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

import pyoxigraph

from kg_rag.errors import QueryError
from kg_rag.service import sandbox
from kg_rag.service.results import MAX_RESULT_BYTES
from kg_rag.service.worker import (
    CHILD_MEMORY_BYTES,
    ForkExecutor,
    QueryAnswer,
    QueryJob,
    decode,
    report,
    timed_out,
    too_large,
)

log = logging.getLogger(__name__)

#: seconds a query waits for an idle child before it takes a child of its own
WAIT = 0.25
#: queries a child answers before it is replaced (its heap only grows)
MAX_QUERIES = 1_000


@dataclass(slots=True)
class _Child:
    pid: int
    jobs: int       # the parent's end of the child's job pipe (write)
    reports: int    # the parent's end of the child's report pipe (read)
    served: int = 0
    writes: int = 0  # the store's write counter when it was forked


def _job_line(job: QueryJob) -> bytes:
    return json.dumps([job.text, job.fmt, job.default_graphs, job.named_graphs, job.base_iri,
                       job.max_rows, job.union_default]).encode() + b"\n"


def _job_of(line: bytes) -> QueryJob:
    text, fmt, default, named, base, max_rows, union = json.loads(line)
    return QueryJob(text, fmt, None if default is None else tuple(default),
                    None if named is None else tuple(named), base, max_rows, union)


def _serve(store: pyoxigraph.Store, jobs: int, reports: int,
           parent: int) -> None:  # pragma: no cover - child
    code = 0
    try:
        sandbox.enter(parent, CHILD_MEMORY_BYTES)
        sandbox.close_pipes((jobs, reports))   # other children's, other queries'
        with os.fdopen(jobs, "rb") as inbox:
            for line in inbox:   # one job a line, until the pool closes the pipe
                sandbox.write_all(reports, report(store, _job_of(line)))
    except BaseException:  # noqa: BLE001 - a child must never return into the server
        code = 70
    finally:
        os._exit(code)


class QueryPool:
    """Run each query in one of ``size`` pre-forked, recycled children of this process, over a
    store nothing writes (see the module doc). Same interface as :class:`.worker.ForkExecutor`."""

    #: the engine can make the default graph the union of the named graphs
    union_default = True

    def __init__(self, store: pyoxigraph.Store, timeout: float, size: int,
                 wait: float = WAIT, writes: Callable[[], int] | None = None,
                 write_lock: AbstractContextManager[object] | None = None) -> None:
        """``writes``/``write_lock``: the store's write counter and write lock, for a store this
        process writes (None: nothing writes it; see the module doc)."""
        self.store = store
        self.writes = writes if writes is not None else (lambda: 0)
        self.write_lock: AbstractContextManager[object] = (
            write_lock if write_lock is not None else contextlib.nullcontext())
        self.timeout = timeout
        self.size = max(1, size)
        self.wait = wait
        self.fallback = ForkExecutor(store, timeout)
        self._cond = threading.Condition()
        self._idle: list[_Child] = []
        self._busy: dict[int, float] = {}   # pid → when it was handed its query
        self._live = 0            # children forked or being forked, not yet retired
        self._closed = False
        self._keeper: threading.Thread | None = None
        #: queries handed to a pool child, queries that took a child of their own; children retired
        self.pooled = self.forked = self.retired = 0

    # --- queries ---------------------------------------------------------------------------
    def run(self, job: QueryJob) -> QueryAnswer:
        child = self._take()
        if child is None:
            with self._cond:
                self.forked += 1
            return self.fallback.run(job)
        deadline = time.monotonic() + self.timeout
        try:
            sent = sandbox.send(child.jobs, _job_line(job), deadline)
        except OSError:   # it died while idle: the job never started, so it takes a fresh child
            self._retire(child, kill=True)
            with self._cond:
                self.forked += 1
            return self.fallback.run(job)
        try:   # the child caps its output; twice that is the backstop
            data, how = b"", "late"
            if sent:
                data, how = sandbox.read_message(child.reports, deadline - time.monotonic(),
                                                 2 * MAX_RESULT_BYTES)
        except BaseException:
            self._retire(child, kill=True)
            raise
        if how == "late":
            self._retire(child, kill=True)
            raise timed_out(self.timeout)
        if how == "large":
            self._retire(child, kill=True)
            raise too_large()
        if how == "eof":   # it died: the same error as a per-query child's, from its status
            return decode(data, job.fmt, self._retire(child, kill=False))
        try:
            answer = decode(data, job.fmt, 0)
        except QueryError:   # syntax or evaluation: the child is fine
            self._give_back(child)
            raise
        except BaseException:   # out of memory, a failure inside the engine: it may not be
            self._retire(child, kill=True)
            raise
        self._give_back(child)
        return answer

    def _take(self) -> _Child | None:
        """An idle child forked since the store's last write, or None (the query forks its own)."""
        with self._cond:
            if self._closed:
                return None
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep, name="kg-rag-query-pool",
                                                daemon=True)
                self._keeper.start()
            slow = time.monotonic() - self.wait
            if not self._idle and 0 < self._live == sum(t < slow for t in self._busy.values()):
                return None   # every child has been busy for a while: none is about to be free
            end = time.monotonic() + self.wait
            while True:
                if not self._cond.wait_for(lambda: self._idle or self._closed,
                                           max(0.0, end - time.monotonic())):
                    return None
                if self._closed:
                    return None
                child = self._idle.pop()
                if child.writes == self.writes():
                    break
                # forked before a write: retired (the keeper forks a current one meanwhile)
                self._retire(child, kill=True)
            self.pooled += 1
            self._busy[child.pid] = time.monotonic()
            return child

    def _give_back(self, child: _Child) -> None:
        with self._cond:
            child.served += 1
            self._busy.pop(child.pid, None)
            if not self._closed and child.served < MAX_QUERIES:
                self._idle.append(child)
                self._cond.notify_all()
                return
        self._retire(child, kill=True)

    def _retire(self, child: _Child, kill: bool) -> int:
        """Stop (``kill``) and collect ``child``, close its pipes; the keeper forks another.
        Returns its wait status."""
        if kill:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            _, status = os.waitpid(child.pid, 0)
        except ChildProcessError:
            status = 0
        os.close(child.jobs)
        os.close(child.reports)
        with self._cond:
            self._busy.pop(child.pid, None)
            self._live -= 1
            self.retired += 1
            self._cond.notify_all()
        return status

    # --- children --------------------------------------------------------------------------
    def _keep(self) -> None:
        """The pool's own thread: fork a child whenever fewer than ``size`` live; after
        :meth:`close`, stay until the last busy child is retired (they die with this thread)."""
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self._live < self.size)
                if self._closed:
                    self._cond.wait_for(lambda: self._live <= 0)
                    return
                self._live += 1
            try:
                child = self._fork()
            except Exception as e:  # noqa: BLE001 - the pool goes on; queries fork their own
                log.warning("the query pool could not fork a child (%s); queries fork their own", e)
                with self._cond:
                    self._live -= 1
                    self._cond.wait(1.0)
                continue
            with self._cond:
                if not self._closed:
                    self._idle.append(child)
                    self._cond.notify_all()
                    continue
            self._retire(child, kill=True)   # closed while it was forked

    def _fork(self) -> _Child:
        parent = os.getpid()
        with self.write_lock, sandbox.FORK_LOCK:   # never in the middle of a write
            writes = self.writes()
            jobs_r, jobs_w = os.pipe()
            try:
                reports_r, reports_w = os.pipe()
            except OSError:
                os.close(jobs_r)
                os.close(jobs_w)
                raise
            try:
                pid = os.fork()
            except OSError:
                for fd in (jobs_r, jobs_w, reports_r, reports_w):
                    os.close(fd)
                raise
            if pid == 0:  # pragma: no cover - child
                os.close(jobs_w)
                os.close(reports_r)
                _serve(self.store, jobs_r, reports_w, parent)
            os.close(jobs_r)
            os.close(reports_w)
        os.set_blocking(jobs_w, False)
        return _Child(pid, jobs_w, reports_r, writes=writes)

    def pids(self) -> list[int]:
        """The idle children's process ids (for tests and diagnostics)."""
        with self._cond:
            return [c.pid for c in self._idle]

    def close(self) -> None:
        """Retire the idle children now and the busy ones when their query ends; later queries
        take a child of their own."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._cond.notify_all()
        for child in idle:
            self._retire(child, kill=True)


__all__ = ["MAX_QUERIES", "WAIT", "QueryPool"]
