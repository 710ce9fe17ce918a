"""``serve``: the SPARQL endpoint, REST API and explanation page over one store."""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import signal
import socket
import sys

from kg_rag.cli.common import store_from_args
from kg_rag.errors import ConfigError, InputError
from kg_rag.settings import Settings, settings
from kg_rag.store.serving import announced

log = logging.getLogger(__name__)


def _port(value: str) -> int:
    """``--port``: a TCP port, 0 to 65535 (0: one the system chooses); a usage error otherwise."""
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is no port number (0 to 65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..65535")
    return port


def check_listen(host: str, port: int) -> int:
    """The port to listen on: ``port``, or for 0 a free one the system picks now (so that the
    "serving" line and the store folder's announcement name the real one). Fails with one line,
    before anything starts, when ``host``:``port`` cannot be listened on (in use, an unknown
    host, not this machine's address): bound as uvicorn binds it, then released for uvicorn."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            return int(sock.getsockname()[1])
    except OSError as e:   # socket.gaierror too
        why = "the port is in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))
        raise InputError(f"cannot listen on {host}:{port}: {why}; choose another --port or "
                         f"--host") from None


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="serve /sparql, the REST API and the explanation page")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="port, 0 to 65535 (default 8000)")
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
    args.port = check_listen(args.host, args.port)
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
        # an embedded store says who serves it, so that other commands read through /sparql;
        # read-only above all: the engine then takes no lock, and only this file keeps other
        # commands from opening the store for writing while this process reads it
        here = (announced(store.location, args.host, args.port, cfg.allow_updates, cfg.read_only)
                if store.kind == "embedded" and store.location != ":memory:"
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
    args.port = check_listen(args.host, args.port)
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
