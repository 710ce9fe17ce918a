"""Issue 22 over real loopback HTTP: an authenticated update with a long operator chain or run
of group patterns is refused with a 400 before the engine parses it (it used to overflow the
parser's stack in the server process), and ``1.SERVICE``/``1SERVICE`` are refused on every path
(public query, authenticated update, ``kg-rag sparql``, the API) without a connection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import QueryError
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.service_server import serve
from tests.unit.store.test_guard_outbound import BOMBS, Listener

TOKEN = "guard-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    srv = Listener()
    yield srv
    srv.sock.close()


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=2.0,
                   max_query_bytes=200_000)
    with serve(create_app(KnowledgeGraph(EmbeddedStore(":memory:"), cfg), cfg, warm=False)) as url:
        with httpx.Client(base_url=url, timeout=30) as c:
            yield c


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_update_bombs_answer_400_and_the_service_lives(client: httpx.Client, name: str) -> None:
    r = client.post("/sparql", content=BOMBS[name].encode(), headers=AUTH)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "chains more than" in r.json()["detail"]
    assert client.get("/health").status_code == 200
    ok = client.post("/sparql", content=b"INSERT DATA { <urn:a> <urn:b> 1 }", headers=AUTH)
    assert ok.status_code == 204


@pytest.mark.parametrize("glue", ["1.", "1", "-1.", "true.", ".5", '"x"'])
def test_glued_service_refused_in_queries_and_updates(client: httpx.Client, listener: Listener,
                                                      glue: str) -> None:
    before = listener.hits
    q = f"SELECT * {{ GRAPH ?g {{ ?s ?p {glue}SERVICE <{listener.url}> {{ ?a ?b ?c }} }} }}"
    r = client.get("/sparql", params={"query": q})
    assert r.status_code == 403 and "SERVICE" in r.json()["detail"]
    u = f"INSERT {{ <urn:a> <urn:b> 2 }} WHERE {{ ?s ?p {glue}SERVICE <{listener.url}> {{ }} }}"
    r = client.post("/sparql", content=u.encode(), headers=AUTH)
    assert r.status_code == 403 and "SERVICE" in r.json()["detail"]
    assert listener.hits == before


def test_glued_service_refused_by_the_cli_and_the_api(tmp_path: Path, listener: Listener,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    before = listener.hits
    q = f"SELECT * {{ ?s ?p 1.SERVICE <{listener.url}> {{ }} }}"
    code = main(["--store", str(tmp_path / "store"), "sparql", q])
    err = capsys.readouterr().err
    assert code == 4 and "refused" in err and "SERVICE" in err and err.count("\n") == 1
    with KnowledgeGraph(EmbeddedStore(":memory:")) as kg:
        with pytest.raises(QueryError, match="SERVICE"):
            kg.raw_query(q)
        with pytest.raises(QueryError, match="LOAD"):
            kg.update(f"INSERT DATA {{ <urn:a> <urn:b> 1 }};LOAD<{listener.url}>")
        with pytest.raises(QueryError, match="chains more than"):
            kg.update(BOMBS["optional"])
    assert listener.hits == before
