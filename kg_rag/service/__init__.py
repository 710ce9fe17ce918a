"""The network service: SPARQL 1.1 Protocol endpoint, REST API, explanation page.

Needs the ``service`` extra (Starlette, uvicorn). ``create_app(kg)`` builds the ASGI app;
``kg-rag serve`` runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_rag.service.app import create_app
    from kg_rag.service.connections import server_options
    from kg_rag.service.workers import SLOTS_VARIABLE

__all__ = ["SLOTS_VARIABLE", "create_app", "server_options"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from kg_rag.service.app import create_app

        return create_app
    if name == "server_options":
        from kg_rag.service.connections import server_options

        return server_options
    if name == "SLOTS_VARIABLE":
        from kg_rag.service.workers import SLOTS_VARIABLE

        return SLOTS_VARIABLE
    raise AttributeError(name)
