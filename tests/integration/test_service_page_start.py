"""The start page and the result page over real HTTP (uvicorn on loopback, the demo store):
the start page says what is loaded; a reused decision's selector reads as words, not
``vstored``."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve

QUESTION = "הפירות העמיסו על הבדים"


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[httpx.Client, KnowledgeGraph]]:
    cfg = Settings(service_record=True)
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client, kg


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_start_page_says_what_is_loaded(page: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, kg = page
    r = c.get("/")
    assert r.status_code == 200
    text = " ".join(_text(r.text).split())
    stats = kg.stats()
    assert f"{stats['documents']} documents indexed" in text
    sources = kg.sources()
    assert sources, "the demo store has sources"
    for s in sources:
        assert s["title"] in text and s["kind"] in text
        assert ", ".join(s["languages"]) in text
    # the source files' paths on the indexing machine are not shown
    assert "file://" not in r.text


def test_a_reused_decision_names_its_selector_without_vstored(
        page: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = page
    # recorded once (the page itself never writes), then asked on the page: decisions reused
    first = c.post("/ask", json={"question": QUESTION, "language": "he"})
    assert first.status_code == 200, first.text
    again = c.get("/", params={"q": QUESTION, "lang": "he"})
    assert again.status_code == 200, again.text
    assert "(decision reused)" in again.text
    assert "vstored" not in again.text and "stored" not in _text(again.text)
    assert re.search(r"selector( v[\w.\-]+)?", _text(again.text))
