"""A query string (or a SPARQL form body) whose percent-escapes are not UTF-8 is one 400 problem
naming the parameter, over real HTTP, on every route — never decoded leniently (U+FFFD in the
parameter's place) and answered as if the client had sent that. UTF-8 escapes still work, and
the page and ``/explain`` still show the error as before (an HTML page for the page)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve

TOKEN = "query-utf8-token-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ASK = quote("ASK { ?s ?p ?o }")


@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    cfg = Settings(service_token=TOKEN)
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def _problem(r: httpx.Response) -> str:
    assert r.status_code == 400, r.text[:300]
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert detail and "\n" not in detail and "Traceback" not in r.text
    return str(detail)


@pytest.mark.parametrize("target,name", [
    (f"/sparql?query={ASK}%FF", "'query'"),                       # the query itself
    (f"/sparql?query={ASK}&format=json%FF", "'format'"),
    (f"/sparql?query={ASK}&default-graph-uri=urn:g%C3", "'default-graph-uri'"),
    (f"/sparql?query={ASK}&unused=%FF", "'unused'"),                # one the endpoint ignores
    ("/sparql?example=%FF", "'example'"),                          # the form / description
    ("/documents?wsd=%FF", "'wsd'"),
    ("/documents/de-bank-konto?x=%E2%80", "'x'"),
    ("/stats?x=%FF", "'x'"),
    ("/health?x=%FF", "'x'"),
    ("/openapi.json?x=%FF", "'x'"),
])
def test_a_get_parameter_that_is_not_utf8_is_a_400_naming_it(api: httpx.Client, target: str,
                                                              name: str) -> None:
    detail = _problem(api.get(target))
    assert detail.startswith(f"the query parameter {name} is not valid UTF-8"), detail


def test_a_parameter_name_that_is_not_utf8_is_a_400(api: httpx.Client) -> None:
    detail = _problem(api.get(f"/sparql?query={ASK}&%FF=1"))
    assert detail == "a query parameter's name is not valid UTF-8"


def test_a_write_with_a_parameter_that_is_not_utf8_writes_nothing(api: httpx.Client) -> None:
    doc = {"id": "utf8-param-1", "text": "The branches bend.", "lang": "en"}
    detail = _problem(api.post("/documents?wsd=%FF", json=doc, headers=AUTH))
    assert detail.startswith("the query parameter 'wsd' is not valid UTF-8")
    assert "utf8-param-1" not in {d["id"] for d in api.get("/documents").json()["documents"]}


def test_a_sparql_form_parameter_that_is_not_utf8_is_a_400(api: httpx.Client) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    detail = _problem(api.post("/sparql", content=f"query={ASK}%FF", headers=form))
    assert detail.startswith("the form parameter 'query' is not valid UTF-8"), detail
    detail = _problem(api.post("/sparql", content=f"query={ASK}&format=%FF", headers=form))
    assert detail.startswith("the form parameter 'format' is not valid UTF-8"), detail


def test_utf8_escapes_are_still_read(api: httpx.Client) -> None:
    query = 'ASK { FILTER(STRLEN("ü") = 1) }'
    r = api.get("/sparql", params={"query": query, "format": "json"})
    assert r.status_code == 200 and r.json()["boolean"] is True, r.text
    r = api.post("/sparql", data={"query": query}, headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.json()["boolean"] is True, r.text
    assert api.get("/documents", params={"wsd": "knowledge"}).status_code == 200


def test_the_page_and_explain_still_show_it_their_way(api: httpx.Client) -> None:
    r = api.get("/?q=%FF")
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert "the query parameter &#x27;q&#x27; is not valid UTF-8" in r.text
    r = api.get("/explain?iri=%FF", headers={"Accept": "text/html"})
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert "the query parameter &#x27;iri&#x27; is not valid UTF-8" in r.text
    assert _problem(api.get("/explain?iri=urn:x&other=%FF")).startswith(
        "the query parameter 'other' is not valid UTF-8")
