"""``serve``: the SPARQL endpoint, REST API and explanation page over one store."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys

from kg_rag.cli.common import store_from_args
from kg_rag.errors import ConfigError, InputError
from kg_rag.settings import Settings, settings
from kg_rag.store.serving import announced

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="serve /sparql, the REST API and the explanation page")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--allow-updates", action="store_true",
                   help="accept SPARQL updates at /sparql (needs KG_RAG_SERVICE_TOKEN)")
    p.add_argument("--read-only", action="store_true",
                   help="write nothing at all: the store opens read-only, questions are not "
                        "recorded, updates and document uploads are refused")
    p.add_argument("--slots", type=int, default=4,
                   help="public SPARQL queries running at once (default 4)")
    p.add_argument("--workers", type=int, default=1,
                   help="service processes (default 1); more than one needs a remote store "
                        "(--endpoint), which they share")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from kg_rag.service import create_app, server_options
    except ModuleNotFoundError as e:
        raise ConfigError(f"kg-rag serve needs uvicorn and starlette ({e.name} is missing): "
                          f"install the 'service' extra from the kg-rag source folder with "
                          f"pip install '.[service]'") from None
    from kg_rag.api import KnowledgeGraph

    cfg = settings()
    if args.allow_updates:
        cfg = cfg.with_(allow_updates=True)
    if args.read_only:
        cfg = cfg.with_(read_only=True)
    if args.workers != 1:
        return _serve_workers(args, cfg)
    # an embedded store in use elsewhere: StoreLockedError here
    store = store_from_args(args, read_only=cfg.read_only, create=not cfg.read_only)
    kg = KnowledgeGraph(store, cfg)
    try:
        app = create_app(kg, cfg, slots=max(1, args.slots))
        print(f"kg-rag: serving {store.kind} store {store.location} on "
              f"http://{args.host}:{args.port}/ (SPARQL at /sparql"
              f"{', updates on' if cfg.allow_updates else ''}"
              f"{', read-only' if cfg.read_only else ''})", file=sys.stderr)
        # uvicorn shuts down gracefully on SIGTERM, then re-raises it to the handler that was
        # there before: make that one end this command normally, so the store is closed
        previous = signal.signal(signal.SIGTERM, _terminated)
        # an embedded store says who serves it, so that other commands read through /sparql
        # (not when read-only: the engine then takes no lock, and the folder may be read-only)
        here = (announced(store.location, args.host, args.port, cfg.allow_updates)
                if store.kind == "embedded" and store.location != ":memory:" and not cfg.read_only
                else contextlib.nullcontext())
        try:
            with here:
                uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                            access_log=False, timeout_graceful_shutdown=5,
                            **server_options(cfg.service_header_timeout,
                                             cfg.service_max_connections,
                                             cfg.service_trusted_proxies))
        except _Terminated:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
    finally:
        kg.close()
    return 0


def _serve_workers(args: argparse.Namespace, cfg: Settings) -> int:
    """N worker processes over one remote store: each builds its app from the environment."""
    import os

    import uvicorn

    from kg_rag.service import SLOTS_VARIABLE, server_options

    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, not {args.workers}")
    endpoint = args.endpoint or cfg.endpoint
    if not endpoint:
        raise InputError("--workers > 1 needs a remote store: an embedded store takes one "
                         "process; serve it with oxigraph serve (or another SPARQL 1.1 store) and "
                         "give --endpoint URL")
    # checked here once, with a clear error, before any worker starts
    store_from_args(args, read_only=cfg.read_only, create=not cfg.read_only).close()
    env = {"KG_RAG_ENDPOINT": endpoint, SLOTS_VARIABLE: str(max(1, args.slots)),
           "KG_RAG_ALLOW_UPDATES": "true" if cfg.allow_updates else "false",
           "KG_RAG_READ_ONLY": "true" if cfg.read_only else "false"}
    if args.update_endpoint:
        env["KG_RAG_UPDATE_ENDPOINT"] = args.update_endpoint
    if getattr(args, "token", None):
        env["KG_RAG_SERVICE_TOKEN"] = args.token
    os.environ.update(env)
    print(f"kg-rag: serving remote store {endpoint} with {args.workers} workers on "
          f"http://{args.host}:{args.port}/ (SPARQL at /sparql"
          f"{', updates on' if cfg.allow_updates else ''}"
          f"{', read-only' if cfg.read_only else ''})", file=sys.stderr)
    uvicorn.run("kg_rag.service.workers:app_from_environment", factory=True,
                workers=args.workers, host=args.host, port=args.port, log_level="warning",
                access_log=False, timeout_graceful_shutdown=5,
                **server_options(cfg.service_header_timeout, cfg.service_max_connections,
                                 cfg.service_trusted_proxies))
    return 0


class _Terminated(Exception):
    pass


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated()
