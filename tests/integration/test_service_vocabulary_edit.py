"""Over real loopback HTTP: an authenticated ``/sparql`` update that adds a label to a loaded
thesaurus makes ``/annotate`` find it at once, and one that removes a label makes it stop
(the service's updates go through ``KnowledgeGraph.update``: loaders/edit.py)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.resources import resource_path
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.service_server import serve

TOKEN = "vocab-edit-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}
THESAURUS = "https://w3id.org/kg-rag/id/source/thesaurus"
BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"
SKOS = "PREFIX skos: <http://www.w3.org/2004/02/skos/core#> "


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=5.0)
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), cfg)
    kg.load([resource_path("demo") / "thesaurus.ttl", resource_path("demo") / "dictionary.ttl"])
    with serve(create_app(kg, cfg, warm=False)) as url:
        with httpx.Client(base_url=url, timeout=60) as c:
            yield c


def mentions(c: httpx.Client, text: str) -> dict[str, set[str]]:
    r = c.post("/annotate", json={"text": text, "language": "en", "wsd": "none"})
    assert r.status_code == 200, r.text
    return {m["text"]: {cand["concept"] for cand in m["candidates"]} for m in r.json()["mentions"]}


def test_labels_added_and_removed_by_updates_are_annotated_accordingly(client: httpx.Client) -> None:
    assert mentions(client, "a bough and a twiglet") == {"bough": {BRANCH}}
    add = f'INSERT DATA {{ GRAPH <{THESAURUS}> {{ <{BRANCH}> skos:altLabel "twiglet"@en }} }}'
    assert client.post("/sparql", content=(SKOS + add).encode(), headers=AUTH).status_code == 204
    assert mentions(client, "a bough and a twiglet") == {"bough": {BRANCH}, "twiglet": {BRANCH}}
    drop = f'DELETE DATA {{ GRAPH <{THESAURUS}> {{ <{BRANCH}> skos:altLabel "bough"@en }} }}'
    assert client.post("/sparql", content=(SKOS + drop).encode(), headers=AUTH).status_code == 204
    assert mentions(client, "a bough and a twiglet") == {"twiglet": {BRANCH}}
