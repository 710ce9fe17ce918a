"""The embedded store: ``pyoxigraph.Store`` on disk or in memory.

A :class:`~kg_rag.store.base.Change` is one engine transaction. One that only adds quads (none of
the graphs it drops exists, it deletes nothing: a first index, new decisions) goes to the engine
as quads, not as update text to render and parse — the same result, since dropping a missing
graph changes nothing; any other runs as its update. The store's write lock makes the existence
check and the write one step against this process's other writers.

An add-only change of at least :data:`BULK_MIN` quads (the indexer's batch of documents) goes
through the engine's bulk loader (``Store.bulk_extend``: sorted files handed to RocksDB whole)
instead of a transaction (``Store.extend``): measured on the bench's 400 documents (680,000
quads in 14 batches) 6.1 s instead of 18.4 s, the store growing by 173 MB instead of 658 MB, and
the postings query no slower (327 vs 430 ms). The loader has a fixed cost of ~12 ms a call, so
smaller changes (a question's record, a redecided mention) keep the transaction; it gains from
~5,000 quads. It makes no transactional promise, so such a change keeps only the quads the
store does not hold yet and, if it fails, removes them again (as the parts below do).

An add-only change of more than :data:`PART` quads (a long document: a 100 kB text is ~700,000
quads) is written in parts of :data:`PART` quads: the engine holds what it writes in memory
until it is on disk (a transaction ~1.6 kB a quad: one for a 1 MB text needed over 10 GB). A
part that fails removes the parts written before it, so a failed write still leaves the store as
it was; while such a change is written, a reader of this store may see part of it. A change may ask for smaller parts
(:attr:`~kg_rag.store.base.Change.part`: a long document's sections, ~40 MB a part of 25,000
instead of ~160 MB). :meth:`EmbeddedStore.drop_graph` removes a graph of
more than :data:`PART` quads in parts for the same reason.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import pyoxigraph
from pyoxigraph import NamedNode, Quad, QueryBoolean, QuerySolutions, QueryTriples, Triple

from kg_rag.errors import QueryError, StoreError, StoreLockedError
from kg_rag.store import queries
from kg_rag.store.base import (
    GRAPH_FORMATS,
    RESULT_FORMATS,
    Change,
    EngineHandler,
    Row,
    Store,
    T,
    UpdateRejected,
    _block,
    _merge,
    check_user_query,
    update_refusal,
)
from kg_rag.store.prologue import PREFIX_IRIS, syntax_message
from kg_rag.store.render import Term, Values, check_quads

log = logging.getLogger(__name__)

_RESULT_FORMATS = {
    "json": (pyoxigraph.QueryResultsFormat.JSON, "application/sparql-results+json"),
    "xml": (pyoxigraph.QueryResultsFormat.XML, "application/sparql-results+xml"),
    "csv": (pyoxigraph.QueryResultsFormat.CSV, "text/csv"),
    "tsv": (pyoxigraph.QueryResultsFormat.TSV, "text/tab-separated-values"),
}
_GRAPH_FORMATS = {
    "turtle": (pyoxigraph.RdfFormat.TURTLE, "text/turtle"),
    "ntriples": (pyoxigraph.RdfFormat.N_TRIPLES, "application/n-triples"),
    "nquads": (pyoxigraph.RdfFormat.N_QUADS, "application/n-quads"),
    "jsonld": (pyoxigraph.RdfFormat.JSON_LD, "application/ld+json"),
    "rdfxml": (pyoxigraph.RdfFormat.RDF_XML, "application/rdf+xml"),
}
BULK_THRESHOLD = 200_000  # quads; above this a load goes through bulk_extend (not transactional)
#: quads from which an add-only change goes through the bulk loader (see the module doc)
BULK_MIN = 5_000
#: quads per transaction of a large add-only change (see the module doc)
PART = 100_000


class EmbeddedStore(Store):
    kind = "embedded"

    def __init__(self, path: str | Path | None = None, read_only: bool = False) -> None:
        """``read_only``: the engine opens the store read-only (a missing store is an error),
        and every write raises StoreError before it reaches the engine."""
        self.read_only = read_only
        #: held around every write (other processes cannot open the store at all)
        self._writing = threading.RLock()
        #: bumped when a write starts and when it ends (:attr:`writes`)
        self._writes = 0
        if path is None or str(path) == ":memory:":
            self.location = ":memory:"
            self._store = pyoxigraph.Store()
            return
        p = Path(path).expanduser()
        self.location = str(p)
        check_store_folder(p)
        if read_only and not (p / "CURRENT").is_file():
            raise StoreError(f"there is no store at {p} to serve read-only: build it first "
                             f"(kg-rag demo, kg-rag load …)")
        writer = lock_holder(p / "LOCK") if read_only else None
        if writer is not None:
            raise StoreLockedError(
                f"the store at {p} is being written by another process (pid {writer}), so it "
                f"cannot be opened read-only now (the engine leaves that undefined: the writer "
                f"removes files as it compacts); wait for that process to end, or serve the store "
                f"from one writable process (kg-rag serve) and use --endpoint")
        try:
            if read_only:
                self._store = pyoxigraph.Store.read_only(str(p))
            else:
                p.mkdir(parents=True, exist_ok=True)
                self._store = pyoxigraph.Store(str(p))
        except OSError as e:
            msg = _first_line(e)
            if "lock" in msg.lower() or "Resource temporarily unavailable" in msg:
                raise StoreLockedError(
                    f"the store at {p} is in use by another process (or already open in this "
                    f"one); stop it, or serve the store and use --endpoint to share it"
                ) from None
            raise StoreError(f"cannot open the store at {p}: {msg}{_advice(msg)}") from None
        except RuntimeError as e:  # the engine's "Corruption: …" and other storage errors
            msg = _first_line(e)
            raise StoreError(f"cannot open the store at {p}: {msg}{_advice(msg, damaged=True)}") from None

    def _engine_error(self, what: str, e: BaseException) -> StoreError:
        """One line naming the store and what to do, for an error the engine raised."""
        msg = _first_line(e)
        return StoreError(f"{what} failed on the store at {self.location}: {msg}{_advice(msg)}")

    def _write_failed(self, what: str, e: BaseException) -> StoreError:
        """Like :meth:`_engine_error`, and remembered for :meth:`health` until a write succeeds
        (RocksDB refuses every write after some I/O errors, even once the disk has space again)."""
        err = self._engine_error(what, e)
        self.write_failure = (f"{err}; if writes keep failing after the cause is fixed, restart "
                              f"the service")
        log.error("%s", err)
        return err

    def _wrote(self) -> None:
        self.write_failure = None

    @contextmanager
    def _write_section(self) -> Iterator[None]:
        """Every write: under the write lock, with :attr:`writes` bumped before and after."""
        with self._writing:
            self._writes += 1
            try:
                yield
            finally:
                self._writes += 1

    @property
    def writes(self) -> int:
        """(the query pool retires the children forked before a write: :mod:`kg_rag.service.pool`)"""
        return self._writes

    @property
    def write_lock(self) -> threading.RLock:
        """(the query pool forks its children under it)"""
        return self._writing

    @property
    def oxigraph(self) -> pyoxigraph.Store:
        """The underlying pyoxigraph store (for the service and benchmarks)."""
        return self._store

    # --- reads ----------------------------------------------------------------------------
    def _run(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> object:
        # Bound values go in as a VALUES block at the top of the WHERE group, exactly as on the
        # remote store, so both stores share one binding semantics (SPARQL's bottom-up scoping).
        # pyoxigraph 0.5.13's substitutions= differs: it refuses a variable that is not in a
        # SELECT's projection, and a previous attempt measured the planner starting from the
        # wrong end with it (6 s vs ms for the candidate lookup).
        merged = _merge(bind, values)
        text = q.with_values(_block(merged)) if merged is not None else q.text
        try:
            return self._store.query(text)
        except SyntaxError as e:
            raise QueryError(f"{q.name}: {e}") from None
        except (OSError, RuntimeError) as e:
            raise self._engine_error(q.name, e) from None

    def _select(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Row]:
        res = self._run(q, bind, values)
        if not isinstance(res, QuerySolutions):
            raise QueryError(f"{q.name} is not a SELECT query")
        names = [v.value for v in res.variables]
        out: list[Row] = []
        try:  # the engine reads lazily: damage may surface while the rows are iterated
            for sol in res:
                row: Row = {}
                for n in names:
                    t = sol[n]
                    if t is not None:
                        row[n] = t
                out.append(row)
        except (OSError, RuntimeError) as e:
            raise self._engine_error(q.name, e) from None
        return out

    def _ask(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> bool:
        res = self._run(q, bind, values)
        if not isinstance(res, QueryBoolean):
            raise QueryError(f"{q.name} is not an ASK query")
        return bool(res)

    def _construct(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Triple]:
        res = self._run(q, bind, values)
        if not isinstance(res, QueryTriples):
            raise QueryError(f"{q.name} is not a CONSTRUCT/DESCRIBE query")
        try:
            return list(res)
        except (OSError, RuntimeError) as e:
            raise self._engine_error(q.name, e) from None

    def raw_query(self, text: str, fmt: str, predeclare: bool = False) -> tuple[bytes, str]:
        info = check_user_query(text)
        try:
            # the dataset the service's /sparql gives the same query over this store: with no
            # FROM, the default graph is the union of all graphs
            res = user_query(self._store, text, predeclare=predeclare,
                             union_default=not info.dataset_clauses)
        except (OSError, RuntimeError) as e:
            raise self._engine_error("the query", e) from None
        buf = io.BytesIO()
        try:  # the results are read while they are serialised: damage surfaces here
            if isinstance(res, QueryTriples):
                if fmt not in GRAPH_FORMATS:
                    fmt = "turtle"
                rdf_fmt, media = _GRAPH_FORMATS[fmt]
                pyoxigraph.serialize(res, buf, rdf_fmt)
                return buf.getvalue(), media
            if fmt not in RESULT_FORMATS:
                fmt = "json"
            res_fmt, media = _RESULT_FORMATS[fmt]
            res.serialize(buf, res_fmt)
        except (OSError, RuntimeError) as e:
            raise self._engine_error("the query", e) from None
        return buf.getvalue(), media

    # --- writes ---------------------------------------------------------------------------
    def _apply(self, change: Change) -> None:
        """``change`` in one transaction: its quads through the engine's ``extend`` when it only
        adds quads, else its update (see the module doc)."""
        if not change:
            return
        self.check_writable()
        with self._write_section():
            try:
                adds_only = not change.delete and not any(
                    self._store.contains_named_graph(g) for g in change.drop_graphs)
            except (OSError, RuntimeError) as e:
                raise self._engine_error("reading the store's graphs before a write", e) from None
            if not adds_only:
                self.execute_update(change.render())
                return
            check_quads(change.insert)   # what the update text would refuse
            part = change.part or PART
            if len(change.insert) < BULK_MIN:
                try:
                    self._store.extend(change.insert)   # one transaction: all of it or nothing
                except (OSError, RuntimeError) as e:
                    raise self._write_failed("the update (nothing was written)", e) from None
            else:
                self._add_in_parts(change.insert, part, change.nested)
            self._wrote()

    def _add_in_parts(self, quads: Sequence[Quad], size: int = 0, nested: str = "") -> None:
        """Add ``quads`` through the bulk loader in parts of ``size`` (0: :data:`PART`), each
        only the quads the store does not hold yet; on failure remove what was added. Only
        quads of graphs the store held before the first part are looked up — and, with
        ``nested`` (:attr:`Change.nested`), a subject under a root the graph does not hold is
        not looked up at all (its root once)."""
        size = size or PART
        added: list[list[Quad]] = []
        try:
            # a graph the store does not have holds none of them: only the others are looked up
            held = {g for g in {q.graph_name for q in quads}
                    if not isinstance(g, NamedNode) or self._store.contains_named_graph(g)}
            new_root: dict[tuple[str, object], bool] = {}   # (root IRI, graph) → holds nothing of it

            def unheld(q: Quad) -> bool:
                g = q.graph_name
                if g not in held:
                    return True
                s = q.subject
                if nested and isinstance(s, NamedNode):
                    root = s.value.split(nested, 1)[0]
                    key = (root, g)
                    fresh = new_root.get(key)
                    if fresh is None:   # looked up before this write adds any of it
                        fresh = new_root[key] = next(
                            self._store.quads_for_pattern(NamedNode(root), None, None, g), None) is None
                    if fresh:
                        return True
                return q not in self._store

            for i in range(0, len(quads), size):
                part = [q for q in quads[i : i + size] if unheld(q)]
                added.append(part)   # before the write: a failed part may be written in part
                self._store.bulk_extend(part)
        except BaseException as e:
            for part in added:
                try:
                    for q in part:
                        self._store.remove(q)
                except Exception as e2:  # noqa: BLE001 - the original error is raised below
                    log.error("could not remove the part of a failed write already written: %s",
                              str(e2).splitlines()[0] if str(e2) else type(e2).__name__)
                    break
            if isinstance(e, (OSError, RuntimeError)):
                raise self._write_failed("the update (nothing was written)", e) from None
            raise

    def _drop_graph(self, graph: NamedNode) -> None:
        """Remove ``graph``; one of more than :data:`PART` quads in parts of :data:`PART`, each
        flushed, the last with the graph itself (a transaction's writes are held in memory: one
        for a long document's graph of millions of quads needed gigabytes). Not atomic then: a
        failure leaves part of the graph, which dropping it again removes."""
        self.check_writable()
        with self._write_section():
            try:
                if not self._store.contains_named_graph(graph):
                    return
                while True:
                    part = list(itertools.islice(
                        self._store.quads_for_pattern(None, None, None, graph), PART))
                    if len(part) < PART:
                        self._store.remove_graph(graph)
                        break
                    for q in part:
                        self._store.remove(q)
                    self._store.flush()
            except (OSError, RuntimeError) as e:
                raise self._write_failed(f"removing the graph <{graph.value}>", e) from None
            self._wrote()

    def execute_update(self, text: str) -> None:
        self.check_writable()
        with self._write_section():
            try:
                self._store.update(text)
            except SyntaxError as e:
                raise QueryError(f"malformed update: {e}") from None
            except (OSError, RuntimeError) as e:
                # pyoxigraph runs one update request as one transaction: a failure writes nothing
                raise self._write_failed("the update (nothing was written)", e) from None
            self._wrote()

    def _user_update(self, text: str, base_iri: str | None) -> None:
        with self._write_section():
            try:   # the standard prefixes predeclared, as for a user's query
                self._store.update(text, base_iri=base_iri, prefixes=PREFIX_IRIS)
            except SyntaxError as e:
                raise QueryError(f"malformed update: {syntax_message(str(e), text)}") from None
            except RuntimeError as e:
                refusal = update_refusal(str(e))
                if refusal:   # the update's fault: the store is fine (and stays healthy)
                    raise UpdateRejected(f"the update was not applied (nothing was written): "
                                         f"{refusal}") from None
                raise self._write_failed("the update (nothing was written)", e) from None
            except OSError as e:
                raise self._write_failed("the update (nothing was written)", e) from None
            self._wrote()

    def on_engine(self, handler: EngineHandler[T]) -> T:
        return handler.embedded(self._store)

    def run_update(self, name: str, bind: Mapping[str, Term] | None = None,
                   values: Values | None = None) -> None:
        q = self._prepare(name, bind, values, update=True)
        self.execute_update(q.with_values(_block(_merge(bind, values))))

    def load_graph(self, graph: NamedNode, quads: Iterable[Quad],
                   progress: Callable[[int], None] | None = None) -> int:
        self.check_writable()
        with self._write_section():
            return self._load_graph(graph, quads, progress)

    def _load_graph(self, graph: NamedNode, quads: Iterable[Quad],
                    progress: Callable[[int], None] | None) -> int:
        batch: list[Quad] = []
        try:
            # a source that fails half way drops the graph, as the remote store does
            for q in quads:
                batch.append(Quad(q.subject, q.predicate, q.object, graph))
            if len(batch) <= BULK_THRESHOLD:
                # drop, then one transaction for the new quads (readers may briefly see the
                # graph empty; on failure it is dropped below)
                self._store.update(f"DROP SILENT GRAPH {graph}")  # rendered from a NamedNode
                self._store.extend(batch)
                if progress:
                    progress(len(batch))
            else:
                self._store.remove_graph(graph) if self._store.contains_named_graph(graph) else None
                step = 100_000
                for i in range(0, len(batch), step):
                    self._store.bulk_extend(batch[i : i + step])
                    if progress:
                        progress(min(step, len(batch) - i))
                self._store.flush()
        except (OSError, RuntimeError) as e:
            self._drop_partial(graph)
            raise self._write_failed(f"loading the graph {graph.value}", e) from None
        except BaseException:
            self._drop_partial(graph)
            raise
        return len(batch)

    def load_ntriples(self, graph: NamedNode, path: str,
                      progress: Callable[[int], None] | None = None) -> int:
        """Bulk-load an N-Triples file into ``graph`` (replacing it); returns the number of
        statements in the file (lines that are not blank or comments), like the remote store."""
        self.check_writable()
        with self._write_section():
            self._bulk_load(graph, path)
        with open(path, "rb") as f:
            n = sum(1 for line in f if line.strip() and not line.lstrip().startswith(b"#"))
        if progress:
            progress(n)
        return n

    def load_ntriples_stream(self, graph: NamedNode, stream: BinaryIO) -> None:
        """Bulk-load N-Triples as ``stream`` delivers them (the engine parses and writes while
        the producer, e.g. a loader in another thread, still maps the source)."""
        self.check_writable()
        with self._write_section():
            self._bulk_load(graph, stream)

    def _bulk_load(self, graph: NamedNode, source: str | BinaryIO) -> None:
        try:
            if self._store.contains_named_graph(graph):
                self._store.remove_graph(graph)
            if isinstance(source, str):
                self._store.bulk_load(path=source, format=pyoxigraph.RdfFormat.N_TRIPLES, to_graph=graph)
            else:
                self._store.bulk_load(source, format=pyoxigraph.RdfFormat.N_TRIPLES, to_graph=graph)
            self._store.flush()
        except (OSError, RuntimeError) as e:
            self._drop_partial(graph)
            raise self._write_failed(f"loading the graph {graph.value}", e) from None
        except BaseException:
            self._drop_partial(graph)
            raise

    def _drop_partial(self, graph: NamedNode) -> None:
        """After a failed load: remove what was written of ``graph`` (the caller re-raises)."""
        try:
            self._store.remove_graph(graph)
        except Exception as e:  # noqa: BLE001 - the original error is re-raised by the caller
            log.error("could not remove the partly loaded graph %s: %s", graph.value,
                      str(e).splitlines()[0] if str(e) else type(e).__name__)

    def named_graphs(self) -> list[NamedNode]:
        try:
            graphs = [g for g in self._store.named_graphs() if isinstance(g, NamedNode)]
        except (OSError, RuntimeError) as e:
            raise self._engine_error("listing the graphs", e) from None
        return sorted(graphs, key=lambda g: g.value)

    # --- snapshots for reader processes ----------------------------------------------------
    def snapshot(self, target: Path) -> bool:
        """Write a consistent copy of the store to the new folder ``target`` (the engine's backup:
        hard links to its immutable files on the same file system, so it is cheap), which later
        writes here do not touch; False for an in-memory store, which has none."""
        if self.location == ":memory:":
            return False
        try:
            with self._writing:
                self._store.backup(str(target))
        except (OSError, RuntimeError) as e:
            raise self._engine_error("the snapshot", e) from None
        return True

    def read_snapshot(self, target: Path) -> None:
        """In a process forked from the writer: read from the snapshot at ``target`` from now
        on, read-only. The writer's own handle is kept, never used or closed here (closing it
        would write into the writer's files)."""
        _KEPT.append(self._store)
        try:
            self._store = pyoxigraph.Store.read_only(str(target))
        except (OSError, RuntimeError) as e:
            raise self._engine_error("opening the snapshot", e) from None
        self.read_only = True

    def close(self) -> None:
        if self.read_only:
            return
        try:
            self._store.flush()
        except (OSError, RuntimeError) as e:  # the writes were committed already; say so, go on
            log.warning("flushing the store at %s failed: %s", self.location, _first_line(e))


#: engine handles a forked reader inherited from its writer: kept alive, never closed there
_KEPT: list[pyoxigraph.Store] = []


# --- a user's query on the engine ---------------------------------------------------------------
def user_query(engine: pyoxigraph.Store, text: str, *, base_iri: str | None = None,
               default_graphs: Sequence[str] | None = None,
               named_graphs: Sequence[str] | None = None, union_default: bool = False,
               predeclare: bool = False) -> QuerySolutions | QueryBoolean | QueryTriples:
    """Run a user's (guarded) read query on the engine: the one place that knows how pyoxigraph
    takes a dataset, the predeclared prefixes and reports a syntax error.

    ``default_graphs``/``named_graphs``: the protocol's dataset (None: not given).
    ``union_default``: with no dataset given, the default graph is the union of all graphs (the
    caller checks that the query names no ``FROM`` either: the engine would ignore it).
    ``predeclare``: the prefixes of :data:`kg_rag.namespaces.PREFIXES` are known to the query.
    Raises QueryError (one line, positions in ``text``) for a malformed query.
    """
    kwargs: dict[str, Any] = {"base_iri": base_iri}
    if default_graphs is not None or named_graphs is not None:
        kwargs["default_graph"] = [NamedNode(g) for g in default_graphs or ()]
        kwargs["named_graphs"] = [NamedNode(g) for g in named_graphs or ()]
    elif union_default:
        kwargs["use_default_graph_as_union"] = True
    if predeclare:
        kwargs["prefixes"] = PREFIX_IRIS
    try:
        return engine.query(text, **kwargs)
    except SyntaxError as e:
        raise QueryError(f"malformed query: {syntax_message(str(e), text)}") from None


# --- opening a folder -----------------------------------------------------------------------------
#: the files a RocksDB store folder holds (pyoxigraph 0.5.13: CURRENT, IDENTITY, LOCK, LOG,
#: LOG.old.*, MANIFEST-*, OPTIONS-*, *.log, *.sst, *.blob)
_STORE_FILE = re.compile(r"^(?:CURRENT|IDENTITY|LOCK|LOG(?:\.old\.\d+)?|MANIFEST-\d+|OPTIONS-\d+"
                         r"|\d+\.(?:log|sst|blob)|[0-9a-f]{6,}\.dbtmp|kg-rag-serving\.(?:json|tmp))$")


def lock_holder(lock: Path, locks: Path = Path("/proc/locks")) -> int | None:
    """The process id of *another* process holding a write lock on the engine's ``LOCK`` file
    (what RocksDB takes while a process has the store open for writing), read from the kernel's
    table of file locks (Linux's ``/proc/locks``); None when there is none, or where the kernel
    keeps no such table (the file is never opened here: closing any descriptor of it would drop
    this process's own lock on it)."""
    try:
        st = lock.stat()
        table = locks.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    me = os.getpid()
    for line in table.splitlines():
        parts = line.split()
        if "->" in parts or len(parts) < 6 or parts[3] != "WRITE":   # "->": a waiting request
            continue
        dev = parts[5].split(":")
        try:
            same = (len(dev) == 3 and int(dev[0], 16) == os.major(st.st_dev)
                    and int(dev[1], 16) == os.minor(st.st_dev) and int(dev[2]) == st.st_ino)
            pid = int(parts[4])
        except ValueError:
            continue
        if same and pid != me:
            return pid
    return None


def check_store_folder(p: Path) -> None:
    """Refuse to open ``p`` as a store unless it is missing, empty or a store (has ``CURRENT``):
    the engine would turn any folder into a new empty store, silently."""
    if not p.exists():
        return
    if not p.is_dir():
        raise StoreError(f"cannot open the store at {p}: it is a file, not a kg-rag store "
                         f"folder; give --store (or KG_RAG_STORE) a folder")
    try:
        names = [e.name for e in p.iterdir()]
    except OSError as e:
        raise StoreError(f"cannot read the store folder {p}: {e.strerror or e}") from None
    if not names or "CURRENT" in names:
        return
    store_files = [n for n in names if _STORE_FILE.match(n)]
    if store_files:
        raise StoreError(f"the store at {p} is damaged: it has {len(store_files)} store files but "
                         f"no CURRENT file; nothing was changed: restore the folder from a backup "
                         f"(or move it away and rebuild the store)")
    files = f"{len(names)} file" + ("" if len(names) == 1 else "s")
    raise StoreError(f"{p} is not a kg-rag store: {files}; refusing to create one here (give "
                     f"--store a new or empty folder)")


def _first_line(e: BaseException) -> str:
    text = " ".join(str(e).split()).rstrip(".")
    return text or type(e).__name__


def _advice(msg: str, damaged: bool = False) -> str:
    """What to do about an engine error with message ``msg``."""
    low = msg.lower()
    if "no space left" in low:
        return "; the disk is full: free space and try again"
    if "read-only file system" in low or "permission denied" in low:
        return "; the store folder cannot be written: check its permissions and the disk"
    if damaged or "corruption" in low:
        return ("; the store is damaged: restore it from a backup (a copy of the folder made "
                "while no kg-rag process had it open), or move it away and rebuild it")
    return ""
