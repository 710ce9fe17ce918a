"""Questions that ask an LLM run in their own bounded pool (issue 22): with a slow model and 45
LLM questions at once, a label-matching question and /health are still answered at once, the
questions beyond the pool's queue get 503 with Retry-After, and /health says the pool is
saturated."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.service import create_app
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.llm_server import KEY, LlmServer, Reply
from tests.support.service_server import serve

QUESTION = {"question": "הפירות העמיסו על הבדים", "language": "he"}


def test_a_slow_model_cannot_starve_the_other_requests() -> None:
    store = EmbeddedStore(":memory:")
    build_demo(KnowledgeGraph(store))
    with LlmServer(Reply(delay=3.0)) as llm:
        cfg = Settings(llm_base_url=llm.url, llm_api_key=KEY, llm_model="test-model",
                       llm_timeout=5.0, llm_deadline=4.0, llm_concurrency=2)
        with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url:
            warm = httpx.post(url + "/ask", json=QUESTION | {"wsd": "none"}, timeout=120)
            assert warm.status_code == 200, warm.text

            def llm_ask(_: int) -> tuple[int, str | None]:
                r = httpx.post(url + "/ask", json=QUESTION | {"wsd": "llm"}, timeout=60)
                return r.status_code, r.headers.get("retry-after")

            with ThreadPoolExecutor(45) as pool:
                futures = [pool.submit(llm_ask, i) for i in range(45)]
                time.sleep(1.0)
                t0 = time.monotonic()
                plain = httpx.post(url + "/ask", json=QUESTION | {"wsd": "none"}, timeout=30)
                took = time.monotonic() - t0
                health = httpx.get(url + "/health", timeout=10).json()
                codes = [f.result() for f in futures]
    assert plain.status_code == 200 and took < 2.5, (plain.status_code, took)
    assert health["status"] == "ok" and health["llm"]["saturated"], health
    assert health["llm"]["capacity"] == 2 and health["llm"]["in_flight"] >= 2
    refused = [c for c in codes if c[0] == 503]
    assert refused and all(ra for _, ra in refused), codes
    assert all(c in (200, 502, 503) for c, _ in codes), codes
