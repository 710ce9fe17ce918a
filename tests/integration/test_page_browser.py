"""The explanation page in a real headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright): ask the paper's Hebrew question, see the chosen sense 'branch', a result, right-to-
left text, and no external resources. Saves a screenshot to tests/artifacts/."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from tests.support.paths import TESTS
from tests.support.service_server import demo_store, serve

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = TESTS / "artifacts"
QUESTION = "הפירות העמיסו על הבדים"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    cfg = Settings()
    with serve(create_app(KnowledgeGraph(demo_store(), cfg), cfg)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("needs Debian chromium (make browser-deps)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists()
                               else shutil.which("chromium"), args=ARGS)
        yield b
        b.close()


def test_hebrew_question_shows_branch_and_a_result(base_url: str, browser: object) -> None:
    page = browser.new_page(locale="he-IL")  # type: ignore[attr-defined]
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base_url) else None)
    page.goto(base_url + "/")
    page.fill("input[name=q]", QUESTION)
    page.select_option("select[name=lang]", "he")
    page.click("button")
    page.wait_for_selector("h2:has-text('Documents')")
    # the question, highlighted, reads right to left
    q = page.locator("p.q")
    assert q.inner_text() == QUESTION
    assert q.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert page.locator("p.q mark").count() >= 2
    # the ambiguous mention: the chosen row is 'branch', with its selector named
    chosen = page.locator("tr.chosen").filter(has_text="branch")
    assert chosen.count() >= 1, page.content()[:2000]
    assert "fabric" in page.locator(".mention").filter(has_text="branch").first.inner_text()
    assert page.locator("text=chosen by").count() >= 1
    # at least one retrieved document with a highlighted passage
    assert page.locator(".result").count() >= 1
    assert page.locator(".result .passage mark").count() >= 1
    # links go to the explanation of the IRI, which opens as a page
    href = page.locator(".mention a").first.get_attribute("href")
    assert href and href.startswith("/explain?iri=")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "page-hebrew.png"), full_page=True)
    page.goto(base_url + href)
    assert "Explanation of" in page.inner_text("h2")
    assert outside == []  # no CDN, nothing fetched from elsewhere
    page.close()


def test_hostile_text_is_escaped(base_url: str, browser: object) -> None:
    page = browser.new_page()  # type: ignore[attr-defined]
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(base_url + "/?q=" + "%3Cscript%3Ealert(1)%3C%2Fscript%3E%E2%80%AE%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(2)%3E")
    html = page.content()
    assert "<script>alert(1)" not in html and "<img src" not in html
    assert "\u202e" not in html
    assert dialogs == []
    page.close()
