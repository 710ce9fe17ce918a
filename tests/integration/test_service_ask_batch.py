"""Batch ``POST /ask`` over real HTTP against the demo store: a JSON list of questions gives a
list of answers in order; the count is bounded; a malformed item refuses the whole batch before
anything is asked; an item the pipeline refuses gets its problem in its place."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.service.rest import MAX_BATCH
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve

QUESTION = "הפירות העמיסו על הבדים"
BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[httpx.Client, KnowledgeGraph]]:
    cfg = Settings()
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg)) as url:
        with httpx.Client(base_url=url, timeout=120) as client:
            yield client, kg


def test_a_batch_is_answered_in_order(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    one = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 2}).json()
    r = c.post("/ask", json=[{"question": QUESTION, "language": "he", "k": 2},
                             "xyzzy plugh", {"question": QUESTION, "focus": "מילה", "language": "he"}])
    assert r.status_code == 200, r.text
    answers = r.json()
    assert isinstance(answers, list) and len(answers) == 3
    assert answers[0]["question"] == QUESTION
    assert [x["id"] for x in answers[0]["results"]] == [x["id"] for x in one["results"]]
    bad = next(m for m in answers[0]["mentions"] if m["text"] == "הבדים")
    assert bad["chosen"]["concept"] == BRANCH
    assert answers[1]["question"] == "xyzzy plugh" and answers[1]["results"] == []
    assert answers[1]["reason"]
    # a focus word the question does not contain: that item's problem, the others answered
    err = answers[2]["error"]
    assert err["status"] == 400 and err["detail"] and "\n" not in err["detail"]


@pytest.mark.parametrize("body,words", [
    ([], "empty"),
    ([QUESTION] * (MAX_BATCH + 1), f"at most {MAX_BATCH}"),
    ([QUESTION, 7], "[1]"),
    ([QUESTION, {"question": ""}], "[1]"),
    ([QUESTION, {"question": QUESTION, "k": "ten"}], "[1]"),
    ([QUESTION, "x" * 2001], "[1]: the question is longer than 2000"),
    ([{"question": QUESTION, "language": "xx-not-a-language"}, QUESTION], "[0]"),
    ("just a string", "JSON object"),
])
def test_a_bad_batch_is_refused_whole_and_nothing_is_asked(
        api: tuple[httpx.Client, KnowledgeGraph], body: object, words: str) -> None:
    c, kg = api
    before = kg.stats()["triples"]
    r = c.post("/ask", json=body)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"] == "application/problem+json"
    detail = r.json()["detail"]
    assert words in detail and "\n" not in detail
    assert kg.stats()["triples"] == before


def test_one_question_keeps_its_own_size_limit(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    r = c.post("/ask", json={"question": QUESTION, "pad": "x" * 70_000})
    assert r.status_code == 413
