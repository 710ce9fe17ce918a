"""Issue 21 over real loopback HTTP: questions asked on an open port do not grow the store.

* by default the service records nothing (``POST /ask``, ``/annotate`` and the page ``/?q=``);
* with ``KG_RAG_SERVICE_RECORD`` on, a ring keeps the newest questions (and only the decisions
  they use), and the store still conforms to its shapes;
* ``kg-rag serve --read-only`` writes nothing of any kind: the store's files are unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.errors import ConfigError, StoreError
from kg_rag.namespaces import DECISIONS_GRAPH, KGR, RDF
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.paths import ROOT
from tests.support.service_server import serve

TOKEN = "record-token-0123456789"


def _questions(n: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in
            (ROOT / "demo" / "questions.jsonl").read_text("utf-8").splitlines()]
    return [(f"{rows[i % len(rows)]['text']} {i}", rows[i % len(rows)]["lang"]) for i in range(n)]


def _demo(path: str | Path = ":memory:") -> EmbeddedStore:
    store = EmbeddedStore(path)
    build_demo(KnowledgeGraph(store))
    return store


def _ask_everywhere(c: httpx.Client, questions: list[tuple[str, str]]) -> list[str]:
    iris = []
    for i, (q, lang) in enumerate(questions):
        r = c.post("/ask", json={"question": q, "language": lang, "k": 3})
        assert r.status_code == 200, r.text
        iris.append(r.json()["question_iri"])
        if i % 3 == 0:
            assert c.post("/annotate", json={"text": q, "language": lang}).status_code == 200
        if i % 5 == 0:
            assert c.get("/", params={"q": q, "lang": lang}).status_code == 200
    return iris


def _decisions(store: EmbeddedStore) -> int:
    return sum(1 for _ in store.oxigraph.quads_for_pattern(None, RDF.type, KGR.SenseSelection,
                                                           DECISIONS_GRAPH))


def test_by_default_the_service_records_nothing() -> None:
    store = _demo()
    kg = KnowledgeGraph(store, Settings())
    before = len(store.oxigraph)
    with serve(create_app(kg, Settings(), warm=False)) as url, httpx.Client(base_url=url, timeout=60) as c:
        iris = _ask_everywhere(c, _questions(60))
        assert len(store.oxigraph) == before
        assert kg.questions() == []
        # an unrecorded question has no explanation: an honest 404, not an empty one
        r = c.get("/explain", params={"iri": iris[0]})
        assert r.status_code == 404
        page = c.get("/", params={"q": _questions(1)[0][0], "lang": "he"}).text
        assert "why?" not in page and "Documents (" in page
        # the page still shows the candidates' definitions, read from the store
        assert "A woody part of a tree that grows out from the trunk" in page
        assert len(store.oxigraph) == before


def test_recording_on_keeps_a_ring_of_the_newest_questions() -> None:
    pytest.importorskip("pyshacl")
    from kg_rag.pipeline.shapes import validate

    store = _demo()
    cfg = Settings(service_record=True, service_record_max=5)
    kg = KnowledgeGraph(store, cfg)
    decisions_before = _decisions(store)
    with serve(create_app(kg, cfg, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as c:
        questions = _questions(24)
        iris = _ask_everywhere(c, questions)
        kept = [q["iri"] for q in kg.questions()]
        assert len(kept) == 5 and iris[-1] in kept and iris[0] not in kept
        assert c.get("/explain", params={"iri": iris[-1]}).status_code == 200
        # at most the decisions of the 5 kept questions were added
        assert _decisions(store) - decisions_before <= 5 * 3
        store.run_update("delete-unused-decisions")   # nothing left behind to collect
        assert _decisions(store) - decisions_before <= 5 * 3
    conforms, report = validate(store)
    assert conforms, report


def _files(path: Path) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(path.iterdir())}


def test_read_only_service_writes_nothing_of_any_kind(tmp_path: Path) -> None:
    path = tmp_path / "store"
    _demo(path).close()
    before = _files(path)
    store = EmbeddedStore(path, read_only=True)
    count = len(store.oxigraph)
    cfg = Settings(read_only=True, service_record=True, service_token=TOKEN)
    kg = KnowledgeGraph(store, cfg)
    with pytest.raises(ConfigError, match="exclude each other"):
        create_app(kg, cfg.with_(allow_updates=True))
    with pytest.raises(ConfigError, match="store opened read-only"):
        create_app(KnowledgeGraph(EmbeddedStore(":memory:")), cfg)
    with serve(create_app(kg, cfg, warm=False)) as url, httpx.Client(base_url=url, timeout=60) as c:
        _ask_everywhere(c, _questions(150))
        r = c.post("/documents", json={"id": "x", "text": "a text", "lang": "en"},
                   headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 403 and "read-only" in r.json()["detail"]
        r = c.post("/sparql", content=b"INSERT DATA { <urn:a> <urn:b> 1 }",
                   headers={"Authorization": f"Bearer {TOKEN}",
                            "Content-Type": "application/sparql-update"})
        assert r.status_code == 403
        assert c.get("/health").json()["status"] == "ok"
    assert len(store.oxigraph) == count and kg.questions() == []
    with pytest.raises(StoreError, match="read-only"):
        kg.ask(_questions(1)[0][0], lang="he")      # the library's own default would record
    store.close()
    assert _files(path) == before
