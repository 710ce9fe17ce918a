"""The Starlette application: SPARQL endpoint, REST API, explanation page, OpenAPI description.

The service keeps no state beside the store (and caches derived from it); with the embedded store
this process owns the store, and the public ``/sparql`` queries run in forked children of it
(:mod:`.worker`; pre-forked and reused, :mod:`.pool`); an authenticated update
is tried in one (:mod:`.preflight`) before it is applied here. Build it with :func:`create_app`
and run it with uvicorn (``kg-rag serve``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import pyoxigraph
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import ConfigError
from kg_rag.service.bodies import StrictQueryString
from kg_rag.service.pool import QueryPool
from kg_rag.service.preflight import preflight
from kg_rag.service.problems import HANDLERS, CatchAll, scrub_paths
from kg_rag.service.ratelimit import Buckets, RateLimit, parse_networks
from kg_rag.service.sparql_endpoint import SparqlService
from kg_rag.service.worker import Executor, ForkExecutor, RemoteExecutor
from kg_rag.settings import Settings

log = logging.getLogger(__name__)


class _Executors:
    """The executor of public queries for each kind of engine (the store picks one)."""

    def __init__(self, timeout: float, pool: int, kg: KnowledgeGraph) -> None:
        self.timeout = timeout
        self.pool = pool
        self.kg = kg

    def embedded(self, engine: pyoxigraph.Store) -> Executor:
        if self.pool > 0:
            # the store's write counter and lock: its writes retire the children forked before
            # them, and no child is forked in the middle of one
            store = self.kg.store
            return QueryPool(engine, self.timeout, self.pool, writes=lambda: store.writes,
                             write_lock=store.write_lock)
        return ForkExecutor(engine, self.timeout)

    def remote(self, endpoint: str) -> Executor:
        return RemoteExecutor(endpoint, self.timeout)


def make_executor(kg: KnowledgeGraph, config: Settings) -> Executor:
    """Public queries on a remote store go there; on the embedded store each runs in a forked
    child: a pre-forked, reused one (:mod:`.pool`; children forked before the store's last write
    are retired unused), or one forked for it (``KG_RAG_QUERY_POOL=0``, or no child free)."""
    try:
        return kg.store.on_engine(_Executors(config.query_timeout, config.query_pool, kg))
    except ConfigError:
        raise ConfigError(f"the service cannot run public queries on a "
                          f"{type(kg.store).__name__}") from None


def make_updater(kg: KnowledgeGraph, config: Settings) -> Any:
    """The endpoint's update function: each update is first tried in a forked child on an empty
    store (:mod:`.preflight`), so an update that crashes the engine's parser kills that child,
    not the service; then it is applied here."""

    def update(text: str, base_iri: str | None) -> None:
        preflight(text, base_iri, config.query_timeout)
        kg.update(text, base_iri)  # vocabularies may have changed: kg forgets derived data

    return update


def create_app(kg: KnowledgeGraph, config: Settings | None = None, *, slots: int = 4,
               warm: bool = True) -> Starlette:
    """The ASGI app over ``kg`` (its store and pipeline). ``slots``: concurrent /sparql queries."""
    cfg = config or kg.settings
    if cfg.allow_updates and cfg.read_only:
        raise ConfigError("--allow-updates and --read-only exclude each other; choose one")
    if cfg.read_only and not kg.store.read_only:
        raise ConfigError("a read-only service needs a store opened read-only "
                          "(open_store(..., read_only=True))")
    if cfg.allow_updates and not cfg.service_token:
        raise ConfigError("updates are enabled but KG_RAG_SERVICE_TOKEN is not set; set it to a "
                          "long random string (clients send it as a Bearer token)")
    executor = make_executor(kg, cfg)
    sparql = SparqlService(cfg, executor, make_updater(kg, cfg), slots=slots)

    from kg_rag.service.api_docs import docs_routes
    from kg_rag.service.page import page_routes
    from kg_rag.service.rest import RestApi

    rest = RestApi(kg, cfg)

    async def health(request: Request) -> Response:
        failure = kg.store.health()
        body = {"status": "ok" if failure is None else "unhealthy", "store": kg.store.kind,
                "updates": cfg.allow_updates, "ready": rest.ready.is_set(),
                "llm": rest.llm.status()}
        if failure is not None:
            body["reason"] = scrub_paths(failure)
        return JSONResponse(body, status_code=200 if failure is None else 503)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm:
            threading.Thread(target=rest.start, name="kg-rag-warm-up", daemon=True).start()
        else:
            rest.ready.set()
        try:
            yield
        finally:
            if isinstance(executor, QueryPool):
                executor.close()

    routes = [Route("/health", health, methods=["GET"]), *sparql.routes(), *rest.routes(),
              *page_routes(kg, cfg), *docs_routes()]
    # a query string that is not UTF-8 is a 400 on every route; the page and /explain read
    # theirs strictly and show the error on their HTML page
    middleware = [Middleware(CatchAll), Middleware(StrictQueryString, pages=("/", "/explain"))]
    if cfg.service_rate > 0:   # outermost: a client over its rate costs no more than this
        exempt = parse_networks(cfg.service_rate_exempt, "KG_RAG_SERVICE_RATE_EXEMPT")
        middleware.insert(0, Middleware(RateLimit, buckets=Buckets(cfg.service_rate,
                                                                   cfg.service_burst),
                                        exempt=exempt))
    app = Starlette(routes=routes, exception_handlers=HANDLERS, lifespan=lifespan,
                    middleware=middleware)
    app.state.kg = kg
    app.state.sparql = sparql
    return app
