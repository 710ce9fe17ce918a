"""The explanation graph's SVG and page without a browser: every box of the path, texts escaped
and stripped of raw bidi controls, each run with its own direction, hostile labels harmless
(the browser test, tests/integration/test_page_browser.py, checks how it is drawn)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kg_rag.api import KnowledgeGraph
from kg_rag.service.explain_graph import explanation_svg
from kg_rag.service.explain_page import concept_iris, explanation_page
from tests.support.service_server import demo_store

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>\u202e\"&"


def _summary() -> dict:
    return {"root": "urn:q", "owner": {"kind": "Question", "text": HOSTILE, "language": "he"},
            "mentions": [{"text": "הבדים", "start": 17, "end": 22, "annotation": "urn:a",
                          "candidates": ["urn:branch", "urn:fabric"],
                          "concepts": [{"iri": "urn:branch", "label": "ענף"}],
                          "decision": {"iri": "urn:d", "status": "resolved", "confidence": 0.6,
                                       "chosen_concept": "urn:branch", "reason": "prior+ppr",
                                       "selector": {"label": "kg-rag knowledge selector"},
                                       "candidates": [
                                           {"concept": "urn:branch", "label": "ענף", "score": 0.8},
                                           {"concept": "urn:fabric", "label": HOSTILE, "score": 0.2}]}}],
            "documents": [{"iri": "urn:doc", "id": "d1", "title": HOSTILE, "language": "en",
                           "concepts": [{"iri": "urn:branch", "label": "ענף"}]}]}


def test_the_svg_draws_every_step_of_the_path_and_escapes_every_text() -> None:
    svg = explanation_svg(_summary(), {"urn:branch": "branch", "urn:fabric": "fabric"})
    root = ET.fromstring(svg)   # well-formed: nothing unescaped broke it
    kinds = [g.get("data-kind") for g in root.iter(SVG + "g") if g.get("data-kind")]
    assert kinds == ["word", "annotation", "decision", "concept", "document"]
    assert "<script>" not in svg and "\u202e" not in svg
    texts = {t.text: t for t in root.iter(SVG + "text")}
    assert texts["הבדים"].get("direction") == "rtl" and texts["branch"].get("direction") == "ltr"
    assert all(t.get("unicode-bidi") == "isolate" for t in root.iter(SVG + "text"))
    assert "[17–22]" in texts and texts["[17–22]"].get("direction") == "ltr"
    # the chosen candidate is marked, with its probability as a bar and a number
    chosen = [g for g in root.iter(SVG + "g") if "chosen" in (g.get("class") or "").split()]
    assert len(chosen) == 1 and chosen[0].get("data-probability") == "0.800000"
    # every box links to its own explanation
    hrefs = [a.get("href") for a in root.iter(SVG + "a")]
    assert "/explain?iri=urn%3Ad" in hrefs and "/explain?iri=urn%3Aq&document=urn%3Adoc" in hrefs


def test_the_page_isolates_each_run_and_says_the_evidence_in_words() -> None:
    html = explanation_page(_Ex(_summary()), {"urn:branch": "branch"})
    assert "<script>alert" not in html and "\u202e" not in html
    assert "<bdi>ענף</bdi> <span class=\"muted\">— <bdi>branch</bdi></span>" in html
    assert "closeness in the thesaurus to the other words&#x27; concepts" in html
    assert not re.search(r"prior\+ppr", html.split("<details>")[0])
    llm = _summary()
    llm["mentions"][0]["decision"] |= {"reason": "", "llm": {
        "template": "wsd-v1", "tokens_in": 120, "tokens_out": 9, "rationale": "עצים נושאים פירות"}}
    llm["mentions"][0]["decision"]["selector"]["model"] = "llama3.1"
    html = explanation_page(_Ex(llm), {})
    assert ('asked llama3.1 (wsd-v1, 120 tokens in, 9 out): <span dir="auto">עצים נושאים פירות'
            '</span>') in html


class _Ex:
    """An explanation as the page reads it (summary, root, text)."""

    def __init__(self, summary: dict) -> None:
        self.summary, self.root = summary, summary["root"]

    def text(self) -> str:
        return "decision: prior+ppr"


def test_a_real_result_explanation_shows_relevance_and_each_words_share() -> None:
    kg = KnowledgeGraph(demo_store())
    a = kg.ask("הפירות העמיסו על הבדים", lang="he", focus="הבדים", k=2)
    ex = kg.explain(a.question_iri, document=a.results[0].doc_iri)
    html = explanation_page(ex, kg.labels(concept_iris(ex.summary), "en"))
    assert f"relevance {a.results[0].relevance:.2f}" in html
    assert html.count("share ") >= len(a.mentions)
    assert "<bdi>ענף</bdi> <span class=\"muted\">— <bdi>branch</bdi></span>" in html


def test_a_long_question_draws_its_first_words_and_says_how_many_more() -> None:
    from kg_rag.service.explain_graph import MAX_WORDS

    s = _summary()
    one = s["mentions"][0]
    s["mentions"] = [{**one, "start": 10 * i, "end": 10 * i + 5, "decision": None}
                     for i in range(MAX_WORDS + 3)]
    root = ET.fromstring(explanation_svg(s, {}))
    words = [g for g in root.iter(SVG + "g") if g.get("data-kind") == "word"]
    assert len(words) == MAX_WORDS
    assert any(t.text == "and 3 more words" for t in root.iter(SVG + "text"))
