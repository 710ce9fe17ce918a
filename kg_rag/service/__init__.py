"""The network service: SPARQL 1.1 Protocol endpoint, REST API, explanation page.

Needs the ``service`` extra (Starlette, uvicorn). ``create_app(kg)`` builds the ASGI app;
``kg-rag serve`` runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg_rag.service.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from kg_rag.service.app import create_app

        return create_app
    raise AttributeError(name)
