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


def _explain_url(base_url: str, question: str, document: str | None = None) -> str:
    from urllib.parse import urlencode

    return base_url + "/explain?" + urlencode({"iri": question} | ({"document": document} if document else {}))


def _check_graph(page: object) -> dict[str, int]:
    """The drawn graph: its nodes by kind, none overlapping another, all inside the picture."""
    boxes = page.evaluate("""() => [...document.querySelectorAll('svg.explanation-graph g.node')]
        .map(g => { const b = g.querySelector('rect.box').getBBox();
                    return {kind: g.dataset.kind, x: b.x, y: b.y, w: b.width, h: b.height}; })""")  # type: ignore[attr-defined]
    view = page.evaluate("() => document.querySelector('svg.explanation-graph').viewBox.baseVal.height")  # type: ignore[attr-defined]
    for i, a in enumerate(boxes):
        assert a["y"] >= 0 and a["y"] + a["h"] <= view
        for b in boxes[i + 1:]:
            apart = (a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"]
                     or a["y"] + a["h"] <= b["y"] or b["y"] + b["h"] <= a["y"])
            assert apart, (a, b)
    kinds: dict[str, int] = {}
    for b in boxes:
        kinds[b["kind"]] = kinds.get(b["kind"], 0) + 1
    return kinds


def _reads_right_to_left(page: object, text: str) -> None:
    """The SVG text ``text`` is its own isolated right-to-left run, drawn right to left."""
    el = page.locator("svg.explanation-graph text", has_text=text).first  # type: ignore[attr-defined]
    assert el.evaluate("e => getComputedStyle(e).direction") == "rtl"
    assert el.evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    first, last = el.evaluate("e => [e.getStartPositionOfChar(0).x, "
                              "e.getStartPositionOfChar(e.getNumberOfChars() - 1).x]")
    assert first > last, (text, first, last)   # the first letter is drawn rightmost


def test_the_explanation_is_drawn_as_a_graph(base_url: str, browser: object) -> None:
    kg = KnowledgeGraph(demo_store())
    answer = kg.ask(QUESTION, lang="he", focus="הבדים", k=3)   # recorded, so it can be explained
    page = browser.new_page(locale="he-IL", viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base_url) else None)
    page.goto(_explain_url(base_url, answer.question_iri))
    kinds = _check_graph(page)
    assert kinds["word"] == kinds["annotation"] == len(answer.mentions) >= 2
    assert kinds["decision"] >= 1 and kinds["concept"] >= 2 and kinds["document"] >= 1
    # the decision: both readings with probabilities that add up to 1, 'branch' chosen
    probs = page.eval_on_selector_all("svg g.candidate", "gs => gs.map(g => +g.dataset.probability)")
    assert len(probs) == 2 and abs(sum(probs) - 1) < 1e-3
    chosen = page.locator("svg g.candidate.chosen")
    assert chosen.count() == 1 and "ענף" in chosen.text_content() and "branch" in chosen.text_content()
    # Hebrew labels are isolated right-to-left runs, the English label beside them its own
    _reads_right_to_left(page, "הבדים")
    _reads_right_to_left(page, "הפירות")
    span = page.locator("svg g.word text", has_text="[17–22]").first   # offsets: their own LTR run
    assert span.evaluate("e => getComputedStyle(e).direction") == "ltr"
    assert span.evaluate("e => e.getStartPositionOfChar(0).x < e.getStartPositionOfChar(1).x")
    en = page.locator("svg g.concept text.english", has_text="branch").first
    assert en.evaluate("e => getComputedStyle(e).direction") == "ltr"
    assert "\u202b" not in page.content() and "\u2067" not in page.content()
    # the table beside it says the same in words
    assert page.locator("tr.chosen", has_text="branch").count() == 1
    assert page.locator("text=closeness in the thesaurus").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explain-graph-hebrew.png"), full_page=True)
    # a document box opens why that document answered: one document, its relevance, each word's share
    page.locator("svg g.document a").first.click()
    page.wait_for_selector("h2:has-text('Why this document')")
    kinds = _check_graph(page)
    assert kinds["document"] == 1
    shown = page.locator("svg g.document").text_content() or ""
    assert "relevance" in shown
    rel = float(shown.split("relevance")[1].split()[0])
    assert 0 <= rel <= 1
    assert page.locator("svg text", has_text="share").count() == len(answer.mentions)
    page.screenshot(path=str(ARTIFACTS / "explain-result-hebrew.png"), full_page=True)
    assert outside == []
    page.close()


def test_an_english_explanation_graph(base_url: str, browser: object) -> None:
    kg = KnowledgeGraph(demo_store())
    answer = kg.ask("the bank of the river", lang="en", k=3)
    page = browser.new_page(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    page.goto(_explain_url(base_url, answer.question_iri))
    kinds = _check_graph(page)
    assert kinds["word"] >= 1 and kinds["concept"] >= 1 and kinds["document"] >= 1
    word = page.locator("svg g.word text.word-text").first
    assert word.evaluate("e => getComputedStyle(e).direction") == "ltr"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "explain-graph-english.png"), full_page=True)
    page.close()


def test_the_api_docs_page_renders_offline_and_sends_a_question(base_url: str, browser: object) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(base_url) else None)
    page.goto(base_url + "/docs")
    assert page.locator("div.op").count() >= 10
    assert page.locator("#schema-Answer table").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "api-docs-top.png"))
    form = page.locator('form.try-json[data-path="/ask"]')
    form.locator("button").click()
    out = form.locator("pre.out")
    page.wait_for_function("e => e.textContent.startsWith('200')", arg=out.element_handle())
    text = out.inner_text()
    assert '"results"' in text and '"relevance"' in text and "branch" in text
    page.screenshot(path=str(ARTIFACTS / "api-docs.png"))
    # a GET form is a plain form to the operation itself
    page.goto(base_url + "/docs")
    page.locator('form.try-get[action="/stats"] button').click()
    page.wait_for_url(base_url + "/stats*")
    assert '"documents"' in page.content()
    assert outside == []
    page.close()
