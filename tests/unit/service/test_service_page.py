"""The explanation page's HTML, rendered from answer dicts: an LLM decision shows its model and
rationale, everything is escaped, raw bidi controls never reach the page, spans are highlighted."""

from __future__ import annotations

from kg_rag.service.page import answer_page, highlighted, merged

BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"
FABRIC = "https://w3id.org/kg-rag/demo/concept/fabric"


def _answer(rationale: str) -> dict:
    cand = lambda c, s: {"id": c, "concept": c, "sense": None, "lemma": "בד", "score": s}  # noqa: E731
    return {
        "question": "הפירות העמיסו על הבדים", "question_iri": "https://w3id.org/kg-rag/id/question/q",
        "lang": "he", "wsd": "llm",
        "mentions": [{"text": "הבדים", "start": 17, "end": 22, "lang": "he", "ambiguous": True,
                      "candidates": [cand(FABRIC, 0.1), cand(BRANCH, 0.9)],
                      "chosen": cand(BRANCH, 0.9), "confidence": 0.9,
                      "decision": "https://w3id.org/kg-rag/id/decision/d",
                      "selector": {"name": "llm", "version": "1", "model": "gpt-4o-mini"},
                      "rationale": rationale, "reused": False}],
        "results": [{"id": "d1", "iri": "https://w3id.org/kg-rag/id/doc/d1", "score": 1.5,
                     "lang": "en", "title": "<b>Orchard</b>", "passage": "dead branches here",
                     "passage_start": 0, "highlights": [[5, 13], [5, 10]], "concepts": []}],
    }


def test_llm_decision_shows_model_and_rationale_escaped() -> None:
    summary = {"mentions": [{"start": 17, "end": 22, "decision": {"candidates": [
        {"concept": BRANCH, "label": "ענף", "definition": "a woody part of a tree", "score": 0.9},
        {"concept": FABRIC, "label": "בד", "definition": "cloth", "score": 0.1}]}}]}
    html = answer_page("q", "he", "llm", _answer("fruit <hangs> on\u202e branches"), summary,
                       {}, {BRANCH: "branch", FABRIC: "fabric"})
    assert "gpt-4o-mini" in html and "chosen by <b>llm</b>" in html
    assert "rationale: fruit &lt;hangs&gt; on branches" in html
    assert "\u202e" not in html
    assert "&lt;b&gt;Orchard&lt;/b&gt;" in html and "<b>Orchard</b>" not in html
    assert 'class="chosen"><td>✓ <a href="/explain?iri=https%3A%2F%2Fw3id.org%2Fkg-rag%2Fdemo%2Fconcept%2Fbranch"' in html
    assert "ענף · branch" in html and "a woody part of a tree" in html
    assert 'dir="auto"' in html and "<script" not in html
    # overlapping passage highlights are merged into one mark
    assert "dead <mark>branches</mark> here" in html


def test_highlighting() -> None:
    assert merged([[5, 10], [0, 2], [8, 12]]) == [(0, 2, None), (5, 12, None)]
    out = highlighted("a<b>c", [(1, 4, "https://e/x?a=1&b=2")])
    assert out == ('a<mark><a href="/explain?iri=https%3A%2F%2Fe%2Fx%3Fa%3D1%26b%3D2" '
                   'title="https://e/x?a=1&amp;b=2">&lt;b&gt;</a></mark>c')


def test_unresolved_decision_says_so() -> None:
    a = _answer("no sense fits")
    a["mentions"][0]["chosen"] = None
    a["mentions"][0]["reason"] = "the model chose an id outside the candidates"
    html = answer_page("q", "he", "llm", a, {"mentions": []}, {}, {})
    assert "left undecided by <b>llm</b>" in html and "chosen by" not in html
    assert 'class="chosen"' not in html and "outside the candidates" in html
