"""``GET /documents/{id}`` over real HTTP against the demo store: the document's id, title,
language, source, text and its annotations with the chosen concepts; 404 for an unknown id
(hostile ids included, nothing written); described in the served OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[httpx.Client, KnowledgeGraph]]:
    cfg = Settings()
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg, warm=False)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client, kg


def test_a_document_with_its_annotations(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, kg = api
    listed = kg.documents()
    doc = next(d for d in listed if d["lang"] == "he")
    r = c.get("/documents/" + quote(doc["id"], safe=""))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["id"] == doc["id"] and body["iri"] == doc["iri"] and body["lang"] == "he"
    assert body["title"] == doc["title"] and isinstance(body["source"], str)
    assert body["text"] and not body["source"].startswith("/")
    anns = body["annotations"]
    assert anns, "a demo document has annotations"
    for a in anns:
        assert 0 <= a["start"] < a["end"] <= len(body["text"])
        assert body["text"][a["start"]:a["end"]] == a["text"]
        assert {ch["concept"] for ch in a["chosen"]} <= set(a["candidates"])
    chosen = [ch for a in anns for ch in a["chosen"]]
    assert chosen and all(ch["concept"].startswith("http") for ch in chosen)
    assert any(ch["label"] for ch in chosen)
    # an ambiguous mention names its decision (in some Hebrew document of the demo)
    ambiguous = []
    for d in (d for d in listed if d["lang"] == "he"):
        got = c.get("/documents/" + quote(d["id"], safe="")).json()["annotations"]
        ambiguous += [a for a in got if len(a["candidates"]) > 1]
        if ambiguous:
            break
    assert ambiguous and all(a["decision"] for a in ambiguous)


@pytest.mark.parametrize("doc_id", ["no-such-document", 'x"> } ; DROP ALL #', "../../etc/passwd",
                                    "הבדים"])
def test_an_unknown_id_is_a_404_problem(api: tuple[httpx.Client, KnowledgeGraph],
                                        doc_id: str) -> None:
    c, kg = api
    before = kg.stats()["triples"]
    r = c.get("/documents/" + quote(doc_id, safe=""))
    assert r.status_code == 404, r.text
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert "\n" not in detail and "GET /documents" in detail
    assert kg.stats()["triples"] == before


def test_get_document_is_in_the_openapi_document(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    doc = c.get("/openapi.json").json()
    op = doc["paths"]["/documents/{doc_id}"]["get"]
    assert op["operationId"] == "getDocument" and {"200", "404"} <= set(op["responses"])
    schema = doc["components"]["schemas"]["Document"]
    assert {"id", "title", "lang", "source", "text", "annotations"} <= set(schema["properties"])
