"""The REST API against its own OpenAPI description (schemathesis, bounded examples, real HTTP).

Every documented operation gets a few generated requests; each answer must match the described
status codes, media types and schemas, and none may be a server error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.service.openapi import openapi_document
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    cfg = Settings(service_token="openapi-token-xyz", max_document_bytes=20_000)
    with serve(create_app(KnowledgeGraph(demo_store(), cfg), cfg)) as url:
        yield url


# SPARQL bodies are text
schemathesis.serializer.alias(["application/sparql-query", "application/sparql-update"],
                              "text/plain")

# the description the app serves (test_description_is_served_and_complete checks they agree);
# loaded at import so that each operation becomes its own test
schema = schemathesis.openapi.from_dict(openapi_document())


@schema.parametrize()
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_matches_its_description(case: Any, base_url: str) -> None:
    # no bearer token: writes must be refused (401) as described, never performed.
    # positive_data_acceptance is left out: a schema-valid question may still name no known
    # concept or a focus outside it, and that is a 400 by design (the words are data, not schema)
    case.call_and_validate(base_url=base_url,
                           excluded_checks=[schemathesis.checks.positive_data_acceptance])


def test_description_is_served_and_complete(base_url: str) -> None:
    doc = httpx.get(base_url + "/openapi.json").json()
    assert doc == json.loads(json.dumps(openapi_document()))
    assert doc["openapi"].startswith("3.")
    assert {"/ask", "/annotate", "/explain", "/documents", "/documents/{doc_id}", "/health",
            "/stats"} <= set(doc["paths"])
