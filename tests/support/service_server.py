"""Run the kg-rag ASGI app under a real uvicorn on a free loopback port (a thread of the test)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from tests.support.oxigraph_server import free_port


@contextlib.contextmanager
def serve(app: Any, startup: float = 15.0) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1; yield its base URL (no trailing slash)."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn stopped during startup")
        if time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port} in {startup}s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


_DEMO: dict[str, Any] = {}


def demo_store() -> Any:
    """One in-memory store with the bundled demo (thesaurus, dictionary, 43 documents), built
    once per test process and shared by the service tests (they add/remove only their own ids)."""
    if "store" not in _DEMO:
        from kg_rag.api import KnowledgeGraph
        from kg_rag.cli.demo import build_demo
        from kg_rag.store import EmbeddedStore

        store = EmbeddedStore(":memory:")
        build_demo(KnowledgeGraph(store))
        _DEMO["store"] = store
    return _DEMO["store"]
