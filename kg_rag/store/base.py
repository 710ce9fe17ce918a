"""One store interface for the embedded Oxigraph store and any SPARQL 1.1 endpoint."""

from __future__ import annotations

import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, Protocol, TypeVar

import pyoxigraph
from pyoxigraph import NamedNode, Quad, Triple

from kg_rag.errors import QueryError, StoreError
from kg_rag.store import queries, stamp
from kg_rag.store.render import Term, Values, quads_block, term

if TYPE_CHECKING:
    from kg_rag.store.guard import QueryInfo

Row = dict[str, Any]  # variable name → pyoxigraph term (unbound variables are absent)

RESULT_FORMATS = ("json", "xml", "csv", "tsv")
GRAPH_FORMATS = ("turtle", "ntriples", "nquads", "jsonld", "rdfxml")


@dataclass(slots=True)
class Change:
    """Writes that belong together; applied as ONE update, so a crash never leaves half of them."""

    drop_graphs: list[NamedNode] = field(default_factory=list)
    delete: list[Quad] = field(default_factory=list)
    insert: list[Quad] = field(default_factory=list)
    #: an add-only change of more quads than this may be written in parts of this many
    #: (None: the store's own bound; the embedded store's is ``embedded.PART``) — for a writer
    #: that undoes the whole itself on failure (a long document's sections)
    part: int | None = None
    #: an IRI separator, or "": a subject ``R`` + this + anything is written and removed only
    #: together with ``R`` in the same graph (kg-rag's decision and its candidate nodes), so a
    #: graph that holds no quad of ``R`` holds none of that subject's either — the embedded
    #: store's bulk write then looks ``R`` up once instead of each quad (what is held is never
    #: added twice either way)
    nested: str = ""

    def render(self) -> str:
        ops = [f"DROP SILENT GRAPH {term(g)}" for g in self.drop_graphs]
        if self.delete:
            ops.append("DELETE DATA {\n" + quads_block(self.delete) + "\n}")
        if self.insert:
            ops.append("INSERT DATA {\n" + quads_block(self.insert) + "\n}")
        return " ;\n".join(ops)

    def __bool__(self) -> bool:
        return bool(self.drop_graphs or self.delete or self.insert)

    # A change crosses processes (``index --workers``: each worker sends its documents' changes
    # to the writer) as N-Quads the engine writes and reads, not as pickled terms: for a short
    # document's 1,500 quads 0.7 ms to write and 1.5 ms to read instead of 25 ms and 6 ms.
    def __getstate__(self) -> tuple[list[str], bytes, bytes, int | None, str]:
        return ([g.value for g in self.drop_graphs], _nquads(self.delete), _nquads(self.insert),
                self.part, self.nested)

    def __setstate__(self, state: tuple[list[str], bytes, bytes, int | None, str]) -> None:
        graphs, delete, insert, self.part, self.nested = state
        self.drop_graphs = [NamedNode(g) for g in graphs]
        self.delete, self.insert = _quads(delete), _quads(insert)


def _nquads(quads: list[Quad]) -> bytes:
    return (pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.N_QUADS) or b"") if quads else b""


def _quads(data: bytes) -> list[Quad]:
    return list(pyoxigraph.parse(data, format=pyoxigraph.RdfFormat.N_QUADS)) if data else []


T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class DocumentsFollower(Protocol):
    """Told of every write of a document graph (:meth:`Store.follow_documents`)."""

    def __call__(self, store: Store, before: str | None, after: str, change: Change | None) -> None: ...


class EngineHandler(Protocol, Generic[T_co]):
    """What a caller does with each kind of engine; the store picks the method
    (:meth:`Store.on_engine`), so no caller switches on the store's type."""

    def embedded(self, engine: pyoxigraph.Store) -> T_co:
        """This process holds the engine (e.g. to fork a killable child that queries it)."""

    def remote(self, endpoint: str) -> T_co:
        """The engine is a SPARQL 1.1 endpoint at this URL."""


class Store(ABC):
    """Read with named query files, write with :class:`Change` or bulk graph loads."""

    kind: str = "abstract"
    location: str = ""
    #: no write of any kind (``kg-rag serve --read-only``); every write raises StoreError
    read_only: bool = False

    #: why the last write failed in the engine (e.g. a full disk), until a write succeeds again
    write_failure: str | None = None

    def health(self) -> str | None:
        """None when the store is fine, else why not (for ``/health``)."""
        return self.write_failure

    @property
    def writes(self) -> int:
        """A counter this process's writes bump as they start and as they end (a copy of the
        store taken while it reads ``n`` is current while it still does); 0 where this process
        does not hold the engine and cannot count the writes (a remote store)."""
        return 0

    @property
    def write_lock(self) -> AbstractContextManager[object]:
        """Held by every write of this process; whoever holds it sees no write half done."""
        return nullcontext()

    def check_writable(self) -> None:
        """StoreError when this store was opened read-only (called before every write)."""
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only (kg-rag serve "
                             f"--read-only): nothing is written")

    def check_loadable(self) -> None:
        """StoreError when this store cannot take a load (:meth:`load_graph`): called before a
        load reads its files, so that a refusal comes before anything is sent or written."""
        self.check_writable()

    # --- named queries -------------------------------------------------------------------
    def select(self, name: str, bind: Mapping[str, Term] | None = None,
               values: Values | None = None) -> list[Row]:
        q = self._prepare(name, bind, values, update=False)
        return self._select(q, bind or {}, values)

    def ask(self, name: str, bind: Mapping[str, Term] | None = None,
            values: Values | None = None) -> bool:
        q = self._prepare(name, bind, values, update=False)
        return self._ask(q, bind or {}, values)

    def construct(self, name: str, bind: Mapping[str, Term] | None = None,
                  values: Values | None = None) -> list[Triple]:
        q = self._prepare(name, bind, values, update=False)
        return self._construct(q, bind or {}, values)

    def run_update(self, name: str, bind: Mapping[str, Term] | None = None,
                   values: Values | None = None) -> None:
        q = self._prepare(name, bind, values, update=True)
        # updates cannot take substitutions in pyoxigraph: bind through VALUES on both stores
        merged = _merge(bind, values)
        self.execute_update(q.with_values(self._values_text(merged)))

    def _values_text(self, values: Values | None) -> str:
        """Bound values as query text: one VALUES block (an engine's dialect may differ)."""
        return _block(values)

    @staticmethod
    def _prepare(name: str, bind: Mapping[str, Term] | None, values: Values | None,
                 update: bool) -> queries.Query:
        q = queries.get(name)
        if q.is_update != update:
            raise QueryError(f"{name} is {'an update' if q.is_update else 'a query'}")
        q.check_inputs(set(bind or {}) | set(values.variables if values else ()))
        both = set(bind or {}) & set(values.variables if values else ())
        if both:
            raise QueryError(f"{name}: {sorted(both)} given both in bind= and in values=; use one")
        if values is not None and len(set(values.variables)) != len(values.variables):
            raise QueryError(f"{name}: a variable appears twice in values=")
        for value in (bind or {}).values():
            term(value)  # same refusal on both stores: only NamedNode/Literal can be bound
        return q

    # --- writes ----------------------------------------------------------------------------
    #: :meth:`follow_documents`' followers (per store object)
    _followers: tuple[DocumentsFollower, ...] = ()

    def follow_documents(self, follower: DocumentsFollower) -> None:
        """Call ``follower(store, stamp before, stamp after, change)`` after every write of a
        document graph (:mod:`kg_rag.store.stamp`; ``change`` None for a user's update, whose
        writes are not known). Once per follower; it runs under the write lock."""
        if follower not in self._followers:
            self._followers = (*self._followers, follower)

    @contextmanager
    def _documents_write(self, change: Change | None) -> Iterator[None]:
        """Around a write that may touch document graphs: a pending stamp first, a finished one
        after, then the followers told (not when the write fails: the pending stamp stays, and
        their data is out of date, as it should be)."""
        with self.write_lock:
            before, pending = stamp.begin(self)
            yield
            after = stamp.finish(self, pending)
            for follower in self._followers:
                follower(self, before, after, change)

    def apply(self, change: Change) -> None:
        """``change`` as one update (see :class:`Change`); one that touches a document graph
        moves the documents stamp (:mod:`kg_rag.store.stamp`)."""
        if not change:
            return
        self.check_writable()
        if not stamp.touches_documents(change):
            self._apply(change)
            return
        with self._documents_write(change):
            self._apply(change)

    def _apply(self, change: Change) -> None:
        """The engine's part of :meth:`apply`."""
        if change:
            self.execute_update(change.render())

    @abstractmethod
    def load_graph(self, graph: NamedNode, quads: Iterable[Quad],
                   progress: Callable[[int], None] | None = None) -> int:
        """Replace ``graph`` with ``quads`` (bulk). On failure the graph is dropped again."""

    def load_ntriples(self, graph: NamedNode, path: str,
                      progress: Callable[[int], None] | None = None) -> int:
        """Replace ``graph`` with the triples of an N-Triples file (large loads). By default
        the file is parsed and passed to :meth:`load_graph`; the embedded store bulk-loads it."""
        import pyoxigraph

        return self.load_graph(graph, pyoxigraph.parse(path=path, format=pyoxigraph.RdfFormat.N_TRIPLES),
                               progress)

    def load_ntriples_stream(self, graph: NamedNode, stream: BinaryIO) -> None:
        """Replace ``graph`` with the N-Triples ``stream`` delivers, read to its end (a loader
        streams a large new source while it maps it). By default the stream is parsed and passed
        to :meth:`load_graph`; the embedded store bulk-loads it."""
        import pyoxigraph

        self.load_graph(graph, pyoxigraph.parse(stream, format=pyoxigraph.RdfFormat.N_TRIPLES))

    def drop_graph(self, graph: NamedNode) -> None:
        """Remove ``graph`` (a document's moves the documents stamp)."""
        self.check_writable()
        if not stamp.is_document(graph):
            self._drop_graph(graph)
            return
        with self._documents_write(Change(drop_graphs=[graph])):
            self._drop_graph(graph)

    def _drop_graph(self, graph: NamedNode) -> None:
        self._apply(Change(drop_graphs=[graph]))

    def user_update(self, text: str, base_iri: str | None = None) -> None:
        """Run a user's update (the service's ``/sparql`` updates, :meth:`KnowledgeGraph.update`),
        after :func:`check_user_update`; ``base_iri`` resolves its relative IRIs where the engine
        supports it. It may write any graph: it moves the documents stamp."""
        self.check_writable()
        check_user_update(text)
        with self._documents_write(None):
            self._user_update(text, base_iri)

    def _user_update(self, text: str, base_iri: str | None) -> None:
        self.execute_update(text)

    # --- engine-specific work -------------------------------------------------------------
    def on_engine(self, handler: EngineHandler[T]) -> T:
        """``handler.embedded(...)`` or ``handler.remote(...)``, as this store's engine is."""
        from kg_rag.errors import ConfigError

        raise ConfigError(f"a {type(self).__name__} offers no engine for this")

    # --- implementation hooks -----------------------------------------------------------
    @abstractmethod
    def _select(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Row]: ...

    @abstractmethod
    def _ask(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> bool: ...

    @abstractmethod
    def _construct(self, q: queries.Query, bind: Mapping[str, Term], values: Values | None) -> list[Triple]: ...

    @abstractmethod
    def execute_update(self, text: str) -> None:
        """Run update text that was rendered by this package (never user text without a guard)."""

    @abstractmethod
    def raw_query(self, text: str, fmt: str, predeclare: bool = False) -> tuple[bytes, str]:
        """Run a user's read query; return the serialised answer and its media type.
        ``predeclare``: the standard prefixes (:mod:`kg_rag.store.prologue`) are known to it,
        and a syntax error's position still counts from ``text``."""

    @abstractmethod
    def named_graphs(self) -> list[NamedNode]: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class UpdateRejected(QueryError):
    """An update the engine refused for what it asks (a graph that does not exist, or already
    does), not for the state of the store: a 400, and the store stays healthy."""

    title = "update rejected"


#: the engine's messages (pyoxigraph, and ``oxigraph serve`` in its HTTP 500 answers) for an update
#: that fails because of what it asks — DROP, CLEAR or MOVE of a graph that does not exist,
#: CREATE of one that does; anything else (I/O, corruption) is the store's failure
_REFUSED_UPDATE = re.compile(r"^\s*The graph <[^>]*> (?:does not exist|already exists)")


def update_refusal(message: str) -> str | None:
    """When the engine's error ``message`` for an update means the update itself is wrong: that
    message in one line with what to do; else None."""
    line = " ".join(message.split()).rstrip(".")
    if not _REFUSED_UPDATE.match(line):
        return None
    fix = ("DROP SILENT GRAPH …) to ignore a missing graph" if "does not exist" in line
           else "CREATE SILENT GRAPH …) to ignore an existing graph")
    return f"{line}; add SILENT to the operation ({fix}"


def check_user_query(text: str) -> QueryInfo:
    """The guard (:mod:`kg_rag.store.guard`) on a user's read query, on every path that runs one:
    no SERVICE/LOAD, nesting and chains capped (sizes are the service's own concern); what it
    read of the query (its form, whether it names a dataset)."""
    from kg_rag.settings import settings
    from kg_rag.store.guard import check_query

    cfg = settings()
    return check_query(text, sys.maxsize, cfg.max_query_depth, cfg.max_query_chain)


def check_user_update(text: str) -> None:
    """Like :func:`check_user_query`, for a user's update."""
    from kg_rag.settings import settings
    from kg_rag.store.guard import check_update

    cfg = settings()
    check_update(text, sys.maxsize, cfg.max_query_depth, cfg.max_query_chain)


def _merge(bind: Mapping[str, Term] | None, values: Values | None) -> Values | None:
    if not bind:
        return values
    one = Values.one(dict(bind))
    if values is None:
        return one
    # cross product of one row with all rows
    variables = one.variables + values.variables
    rows = [tuple(one.rows[0]) + tuple(r) for r in values.rows]
    return Values(variables, rows)


def _block(values: Values | None) -> str:
    from kg_rag.store.render import values_block

    return values_block(values) if values is not None else ""
