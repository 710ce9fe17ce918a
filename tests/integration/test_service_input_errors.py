"""Bad input to the service over real HTTP is one 400 with a one-line ``detail``, never a 500,
and nothing is written: lone surrogate escapes and JSON nested too deep (checked where the body
is parsed, for every JSON route), a "metadata" that is not an object (the JSON body, a JSON Lines
upload and ``kg-rag index``), non-string ids and titles, bad ``lang``/``wsd``/non-UTF-8
parameters of the page, uploads named as the client named them (never the server's temporary
folder), updates that fail because of what they ask (400, the store stays healthy; also on a
remote ``oxigraph serve``), and details cut to a bounded length."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import QueryError, StoreError
from kg_rag.service import create_app
from kg_rag.service.problems import MAX_DETAIL
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore, RemoteStore
from kg_rag.store.base import UpdateRejected
from tests.support.service_server import demo_store, serve

TOKEN = "input-errors-token-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTION = "הפירות העמיסו על הבדים"
JSON = {"Content-Type": "application/json"}
SURROGATE = '"\\ud800"'          # the JSON escape of a lone surrogate, as a client sends it
DEEP = "[" * 5000 + "]" * 5000   # the parser's recursion limit, not a size limit


@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    cfg = Settings(service_token=TOKEN, max_document_bytes=20_000)
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def updates() -> Iterator[tuple[httpx.Client, EmbeddedStore]]:
    store = EmbeddedStore(":memory:")
    g = NamedNode("urn:input-errors:g")
    store.oxigraph.add(Quad(NamedNode("urn:a"), NamedNode("urn:b"), Literal("c"), g))
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=5.0)
    with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client, store


def _problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert detail and "\n" not in detail and "Traceback" not in r.text
    return str(detail)


def _ids(c: httpx.Client) -> set[str]:
    return {d["id"] for d in c.get("/documents").json()["documents"]}


# --- 1. lone surrogate escapes: one check where the body is parsed -------------------------

@pytest.mark.parametrize("path,body,field", [
    ("/ask", '{"question": %s}', "'question'"),
    ("/ask", '{"question": "x", "focus": %s}', "'focus'"),
    ("/ask", '["fine", %s]', "'[1]'"),
    ("/ask", '[{"question": %s}]', "'[0].question'"),
    ("/annotate", '{"text": %s}', "'text'"),
    ("/annotate", '{"text": "abc", "language": %s}', "'language'"),
])
def test_a_lone_surrogate_is_a_400_naming_the_field(api: httpx.Client, path: str, body: str,
                                                    field: str) -> None:
    raw = (body % '"abc \\ud800"').encode()
    detail = _problem(api.post(path, content=raw, headers=JSON), 400)
    assert detail.startswith(f"{field} holds a lone surrogate escape (\\ud800)"), detail


@pytest.mark.parametrize("doc,field", [
    ('{"id": "surr-1", "text": %s}', "'text'"),
    ('{"id": "surr-1", "text": "x", "title": %s}', "'title'"),
    ('{"id": %s, "text": "x"}', "'id'"),
    ('{"documents": [{"id": "surr-1", "text": "x", "metadata": {"k": [%s]}}]}',
     "'documents[0].metadata.k[0]'"),
    ('{"documents": [{"id": "surr-1", "text": "x", "metadata": {%s: 1}}]}',
     "a key of 'documents[0].metadata'"),
])
def test_a_lone_surrogate_in_a_document_is_a_400_and_nothing_is_written(
        api: httpx.Client, doc: str, field: str) -> None:
    detail = _problem(api.post("/documents", content=(doc % SURROGATE).encode(),
                               headers={**JSON, **AUTH}), 400)
    assert detail.startswith(f"{field} holds a lone surrogate escape"), detail
    assert "surr-1" not in _ids(api)


def test_a_surrogate_pair_is_text(api: httpx.Client) -> None:
    r = api.post("/annotate", content=b'{"text": "fig \\ud83c\\udf33 tree"}', headers=JSON)
    assert r.status_code == 200, r.text
    assert r.json()["text"] == "fig \U0001f333 tree"


# --- 2. JSON nested too deep ----------------------------------------------------------------

@pytest.mark.parametrize("path,body,auth", [
    ("/ask", '{"question": "x", "k": %s}', False),
    ("/ask", "[%s]", False),
    ("/annotate", '{"text": "x", "scheme": %s}', False),
    ("/documents", '{"id": "deep-1", "text": "x", "metadata": {"a": %s}}', True),
])
def test_json_nested_too_deep_is_a_400(api: httpx.Client, path: str, body: str, auth: bool) -> None:
    headers = {**JSON, **(AUTH if auth else {})}
    for nested in (DEEP, "[" * 70 + "]" * 70):   # past the parser's stack; past the limit (64)
        detail = _problem(api.post(path, content=(body % nested).encode(), headers=headers), 400)
        assert "nests arrays and objects deeper than 64 levels" in detail
    assert "deep-1" not in _ids(api)


def test_json_nested_within_the_limit_is_read(api: httpx.Client) -> None:
    meta = {"a": json.loads("[" * 20 + "]" * 20)}
    r = api.post("/documents", json={"id": "deep-ok", "text": "The branches bend.", "lang": "en",
                                     "metadata": meta}, headers=AUTH)
    assert r.status_code == 201, r.text
    assert api.delete("/documents/deep-ok", headers=AUTH).status_code == 204


# --- 3. "metadata" must be an object ----------------------------------------------------------

@pytest.mark.parametrize("meta", ["lang=en", ["en"], 5])
def test_metadata_that_is_not_an_object_is_a_400(api: httpx.Client, meta: Any) -> None:
    doc = {"id": "meta-1", "text": "The branches bend.", "metadata": meta}
    detail = _problem(api.post("/documents", json=doc, headers=AUTH), 400)
    assert detail == 'documents[0]: "metadata" must be an object'
    detail = _problem(api.post("/documents", json={"documents": [doc]}, headers=AUTH), 400)
    assert detail == 'documents[0]: "metadata" must be an object'
    line = json.dumps(doc).encode() + b"\n"
    detail = _problem(api.post("/documents", files={"file": ("notes.jsonl", line)}, headers=AUTH), 400)
    assert detail == 'notes.jsonl:1: "metadata" must be an object'
    assert "meta-1" not in _ids(api)


def test_kg_rag_index_says_the_same_in_one_line(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from kg_rag.cli import main

    bad = tmp_path / "corpus.jsonl"
    bad.write_text('{"id": "a", "text": "ok"}\n{"id": "b", "text": "x", "metadata": "s"}\n',
                   encoding="utf-8")
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "store"), "index", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(':2: "metadata" must be an object') and "\n" not in err
    assert "Traceback" not in err


# --- 5. the page checks lang, wsd and q as /ask does --------------------------------------

@pytest.mark.parametrize("params,message", [
    ("q=%D7%92%D7%91%D7%A8&lang=zz", "unsupported language code &#x27;zz&#x27;"),
    ("q=%D7%92%D7%91%D7%A8&wsd=bogus", "unknown sense selection mode &#x27;bogus&#x27;"),
    ("q=%FF%FE", "the query parameter &#x27;q&#x27; is not valid UTF-8"),
    ("lang=zz", "unsupported language code"),
])
def test_the_page_shows_bad_parameters_as_an_error(api: httpx.Client, params: str,
                                                   message: str) -> None:
    r = api.get("/?" + params)
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert '<p class="error"' in r.text and message in r.text, r.text[-600:]
    assert '<form method="get" action="/">' in r.text       # the box is there to try again


def test_the_page_takes_every_value_ask_takes(api: httpx.Client) -> None:
    r = api.get("/", params={"q": QUESTION, "lang": "HE", "wsd": " Knowledge "})
    assert r.status_code == 200, r.text[-600:]
    assert "<option selected>he</option>" in r.text
    assert '<option value="knowledge" selected>' in r.text
    r = api.get("/", params={"q": "Bank", "lang": "it", "wsd": "first-sense"})
    assert r.status_code == 200 and "<option selected>it</option>" in r.text


def test_explain_refuses_a_parameter_that_is_not_utf8(api: httpx.Client) -> None:
    assert "'iri' is not valid UTF-8" in _problem(api.get("/explain?iri=%FF"), 400)


# --- 6. uploads are named as the client named them ----------------------------------------

def test_upload_errors_name_the_file_not_the_temporary_folder(api: httpx.Client) -> None:
    def refused(name: str, content: bytes) -> str:
        detail = _problem(api.post("/documents", files={"file": (name, content)}, headers=AUTH), 400)
        assert "kgr-upload" not in detail and "/tmp" not in detail
        return detail

    assert refused("b.txt", b"\xff\xfe\x00bad").startswith("b.txt: looks like a binary file")
    assert refused("latin.md", "caf\xe9".encode("latin-1")).startswith("latin.md: not valid UTF-8")
    assert refused("x.pdf", b"%PDF-1.4").startswith("x.pdf: not a readable PDF")
    lines = b'{"id": "up-1", "text": "ok"}\n{"id": "up-2"}\n'
    assert refused("r.jsonl", lines) == 'r.jsonl:2: missing "text" (a string)'
    assert not {"up-1", "up-2"} & _ids(api)


def test_an_uploaded_document_records_no_temporary_path(api: httpx.Client) -> None:
    lines = b'{"id": "up-3", "text": "The branches bend.", "lang": "en"}\n'
    r = api.post("/documents", files={"file": ("orchard.jsonl", lines)}, headers=AUTH)
    assert r.status_code == 201, r.text
    doc = api.get("/documents/up-3").json()
    assert doc["source"] == "orchard.jsonl:1"
    hits = api.get("/sparql", params={"query": 'ASK { GRAPH ?g { ?s ?p ?o } '
                                               'FILTER(isLiteral(?o) && CONTAINS(STR(?o), "kgr-upload")) }'})
    assert hits.status_code == 200 and hits.json()["boolean"] is False
    assert "kgr-upload" not in json.dumps(doc)
    assert api.delete("/documents/up-3", headers=AUTH).status_code == 204


# --- 7. id, title and lang are strings, as the OpenAPI document says ------------------------

@pytest.mark.parametrize("doc,field", [
    ({"id": 5, "text": "x"}, "id"),
    ({"id": True, "text": "x"}, "id"),
    ({"id": "str-1", "text": "x", "title": 5}, "title"),
    ({"id": "str-1", "text": "x", "title": ["a"]}, "title"),
    ({"id": "str-1", "text": "x", "lang": 5}, "lang"),
])
def test_non_string_id_title_or_lang_is_a_400(api: httpx.Client, doc: dict[str, Any],
                                              field: str) -> None:
    detail = _problem(api.post("/documents", json=doc, headers=AUTH), 400)
    assert detail == f'documents[0]: "{field}" must be a string'
    assert not {"5", "True", "str-1"} & _ids(api)


# --- 8. details are cut ----------------------------------------------------------------------

def test_a_detail_never_echoes_the_whole_input(api: httpx.Client) -> None:
    r = api.get("/explain", params={"iri": "x" * 60_000})
    detail = _problem(r, 404)
    assert len(detail) <= MAX_DETAIL and "…" in detail and len(r.content) < 2 * MAX_DETAIL + 200
    page = api.get("/explain", params={"iri": "x" * 60_000}, headers={"Accept": "text/html"})
    assert page.status_code == 404 and len(page.content) < 10_000
    # a batch item's problem too
    answers = api.post("/ask", json=[{"question": QUESTION, "focus": "y" * 5000}]).json()
    item = answers[0]["error"]
    assert item["status"] == 400 and len(item["detail"]) <= MAX_DETAIL
    assert item["detail"].endswith("is not in the question; give a word of it or START:END")


# --- 4. an update that fails because of what it asks -----------------------------------------

SPARQL_UPDATE = {**AUTH, "Content-Type": "application/sparql-update"}


@pytest.mark.parametrize("update,says", [
    ("DROP GRAPH <urn:input-errors:nope>", "The graph <urn:input-errors:nope> does not exist"),
    ("CLEAR GRAPH <urn:input-errors:nope>", "does not exist"),
    ("CREATE GRAPH <urn:input-errors:g>", "The graph <urn:input-errors:g> already exists"),
])
def test_an_update_the_engine_refuses_is_a_400_and_the_store_stays_healthy(
        updates: tuple[httpx.Client, EmbeddedStore], update: str, says: str) -> None:
    c, store = updates
    detail = _problem(c.post("/sparql", content=update.encode(), headers=SPARQL_UPDATE), 400)
    assert says in detail and "nothing was written" in detail and "SILENT" in detail
    assert "<path>" not in detail and "/tmp" not in detail
    assert c.get("/health").json()["status"] == "ok" and store.write_failure is None
    r = c.post("/sparql", content=b"INSERT DATA { GRAPH <urn:input-errors:h> { <urn:a> <urn:b> 1 } }",
               headers=SPARQL_UPDATE)
    assert r.status_code == 204
    assert c.post("/sparql", content=b"DROP GRAPH <urn:input-errors:h>",
                  headers=SPARQL_UPDATE).status_code == 204


def test_an_embedded_store_tells_a_refused_update_from_a_failed_one() -> None:
    store = EmbeddedStore(":memory:")
    with pytest.raises(UpdateRejected) as e:
        store.user_update("DROP GRAPH <urn:input-errors:nope>")
    assert isinstance(e.value, QueryError) and not isinstance(e.value, StoreError)
    assert e.value.http_status == 400 and store.health() is None


def test_a_remote_oxigraph_store_tells_it_too(oxigraph_url: str) -> None:
    store = RemoteStore(oxigraph_url)
    with pytest.raises(UpdateRejected) as e:
        store.user_update("DROP GRAPH <urn:input-errors:remote-nope>")
    assert "The graph <urn:input-errors:remote-nope> does not exist" in str(e.value)
    assert "HTTP 500" not in str(e.value)
    store.user_update("CREATE GRAPH <urn:input-errors:remote>")
    try:
        with pytest.raises(UpdateRejected, match="already exists"):
            store.user_update("CREATE GRAPH <urn:input-errors:remote>")
    finally:
        store.user_update("DROP SILENT GRAPH <urn:input-errors:remote>")


@pytest.mark.parametrize("engine", ["embedded", "remote"])
def test_a_users_update_knows_the_predeclared_prefixes_as_a_query_does(engine: str,
                                                                        oxigraph_url: str) -> None:
    """`kg-rag sparql` and /sparql queries know skos:, rdfs:, kgr:, … without a PREFIX line; a
    user's update does too, on both engines, and a malformed one points into the user's own
    text (the remote engine's prologue subtracted from the column)."""
    store = EmbeddedStore(":memory:") if engine == "embedded" else RemoteStore(oxigraph_url)
    g = f"urn:input-errors:prefixes-{engine}"
    try:
        store.user_update(f'INSERT DATA {{ GRAPH <{g}> {{ <urn:a> skos:prefLabel "a"@en }} }}')
        body, _ = store.raw_query(f"SELECT ?l WHERE {{ GRAPH <{g}> {{ ?s skos:prefLabel ?l }} }}",
                                  "csv", predeclare=True)
        assert body.decode().split() == ["l", "a"]
        # the user's own declaration of a predeclared name wins
        store.user_update(f'PREFIX skos: <urn:mine#> INSERT DATA {{ GRAPH <{g}> {{ <urn:b> skos:x 1 }} }}')
        body, _ = store.raw_query(f"SELECT ?s WHERE {{ GRAPH <{g}> {{ ?s <urn:mine#x> 1 }} }}", "csv")
        assert body.decode().split() == ["s", "urn:b"]
        with pytest.raises(QueryError) as e:
            store.user_update(f'INSERT DATA {{ GRAPH <{g}> {{ <urn:a> foo:bar "x" }} }}')
        assert str(e.value).startswith("malformed update: line 1, column ")
        assert "'foo:' is not declared" in str(e.value)
    finally:
        store.user_update(f"DROP SILENT GRAPH <{g}>")
