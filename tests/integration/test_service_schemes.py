"""The REST API's ``scheme`` over real HTTP on the two-scheme fixture (tests/data/schemes/):
/annotate and /ask keep one scheme's readings, candidates carry their scheme, and an unknown
scheme is a 400 problem."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.paths import DATA
from tests.support.service_server import serve

HERE = DATA / "schemes"
B = "https://example.org/econ-b/"


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    cfg = Settings()
    kg = KnowledgeGraph(EmbeddedStore(":memory:"), cfg)
    kg.load([HERE / "econ-a.ttl", HERE / "econ-b.ttl"])
    kg.index([HERE / "docs.jsonl"])
    with serve(create_app(kg, cfg)) as url, httpx.Client(base_url=url, timeout=60) as c:
        yield c


def test_annotate_and_ask_take_a_scheme(client: httpx.Client) -> None:
    r = client.post("/annotate", json={"text": "inflation", "language": "en"})
    assert r.status_code == 200, r.text
    (m,) = r.json()["mentions"]
    assert not m["ambiguous"] and len(m["candidates"]) == 2 and len(m["same_meaning"]) == 1
    assert {c["scheme_name"] for c in m["candidates"]} == {"econ-a", "econ-b"}
    r = client.post("/annotate", json={"text": "inflation", "language": "en", "scheme": "econ-b"})
    (m,) = r.json()["mentions"]
    assert [c["scheme"] for c in m["candidates"]] == [B + "scheme"]
    r = client.post("/ask", json={"question": "inflation", "language": "en", "scheme": B + "scheme"})
    assert r.status_code == 200, r.text
    assert {c["concept"] for m in r.json()["mentions"] for c in m["candidates"]} == {B + "inflation"}


def test_an_unknown_scheme_is_a_400_problem(client: httpx.Client) -> None:
    r = client.post("/ask", json={"question": "inflation", "language": "en", "scheme": "nope"})
    assert r.status_code == 400 and "no concept scheme or loaded source" in r.json()["detail"]
