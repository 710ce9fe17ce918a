"""Issue 22: concurrent identical questions over real loopback HTTP record each decision once.

100 concurrent ``POST /ask`` (5 questions × 20) used to record one decision up to 7 times (seven
``prov:startedAtTime``), and the store then failed its own SHACL shapes. The write of a question
(and its new decisions) is one write path under the knowledge graph's writer lock, which checks
again, under the lock, which decisions another request recorded meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import httpx
import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.namespaces import DECISIONS_GRAPH, PROV
from kg_rag.pipeline.shapes import validate
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.llm_server import KEY, LlmServer, choose
from tests.support.paths import ROOT
from tests.support.service_server import serve

pytest.importorskip("pyshacl")


def _questions(n: int) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in (ROOT / "demo" / "questions.jsonl").read_text("utf-8").splitlines()]
    # a suffix makes each context new, so every question needs new decisions
    return [{"question": r["text"] + " ·", "language": r["lang"], "wsd": "llm"} for r in rows[:n]]


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[httpx.Client, EmbeddedStore]]:
    store = EmbeddedStore(":memory:")
    build_demo(KnowledgeGraph(store))
    # a loopback model that takes a moment, like a real one: the requests overlap
    with LlmServer(lambda body: replace(choose({})(body), delay=0.3)) as llm:
        cfg = Settings(llm_base_url=llm.url, llm_api_key=KEY, llm_model="test-model",
                       llm_concurrency=100, service_record=True,
                       service_record_max=1_000)
        with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url:
            with httpx.Client(base_url=url, timeout=120,
                              limits=httpx.Limits(max_connections=100)) as client:
                yield client, store


def _started_times(store: EmbeddedStore) -> dict[str, int]:
    counts: dict[str, int] = {}
    for q in store.oxigraph.quads_for_pattern(None, PROV.startedAtTime, None, DECISIONS_GRAPH):
        counts[q.subject.value] = counts.get(q.subject.value, 0) + 1
    return counts


def test_concurrent_identical_questions_record_each_decision_once(
        live: tuple[httpx.Client, EmbeddedStore]) -> None:
    client, store = live
    before = set(_started_times(store))
    bodies = _questions(5) * 20
    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(lambda b: client.post("/ask", json=b).status_code, bodies))
    assert statuses == [200] * 100
    counts = _started_times(store)
    new = {d: n for d, n in counts.items() if d not in before}
    assert new, "the questions made no new decision: the test shows nothing"
    assert {d: n for d, n in new.items() if n > 1} == {}
    assert all(isinstance(NamedNode(d), NamedNode) for d in new)
    conforms, report = validate(store)
    assert conforms, report
