"""The REST API over real HTTP against the demo store: ask, annotate, explain, documents (with
the bearer token), stats, problem+json errors, and an unexpected exception that leaves the
service up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.service import create_app
from kg_rag.settings import Settings
from tests.support.service_server import demo_store, serve

TOKEN = "rest-token-abcdef"
QUESTION = "הפירות העמיסו על הבדים"
BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[httpx.Client, KnowledgeGraph]]:
    # the explanation of an asked question needs it recorded (off by default on the service)
    cfg = Settings(service_token=TOKEN, max_document_bytes=20_000, service_record=True)
    kg = KnowledgeGraph(demo_store(), cfg)
    with serve(create_app(kg, cfg)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            yield client, kg


def _problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    assert "Traceback" not in r.text
    return body


def test_health_and_stats(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    assert c.get("/health").json()["status"] == "ok"
    stats = c.get("/stats").json()
    assert stats["documents"] >= 40 and stats["triples"] > 1000


def test_ask_chooses_branch(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    r = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 3, "focus": [17, 22]})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["lang"] == "he" and a["question"] == QUESTION
    bad = next(m for m in a["mentions"] if m["text"] == "הבדים")
    assert bad["ambiguous"] and bad["chosen"]["concept"] == BRANCH
    assert {cand["concept"] for cand in bad["candidates"]} >= {BRANCH}
    assert bad["selector"]["name"] and bad["decision"].startswith("https://w3id.org/kg-rag/id/decision/")
    assert 1 <= len(a["results"]) <= 3
    top = a["results"][0]
    assert top["passage"] and top["highlights"]


def test_results_have_a_relevance_and_min_score_cuts_with_a_reason(
        api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    full = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 50}).json()["results"]
    assert full and all(0 <= r["relevance"] <= 1 for r in full)
    cut = sorted(r["relevance"] for r in full)[len(full) // 2]
    kept = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 50, "min_score": cut})
    assert kept.status_code == 200, kept.text
    assert [r["id"] for r in kept.json()["results"]] == [r["id"] for r in full if r["relevance"] >= cut]
    assert c.post("/ask", json={"question": QUESTION, "language": "he", "min_score": 0.3}).status_code == 200
    best = max(r["relevance"] for r in full)
    assert best < 1
    empty = c.post("/ask", json={"question": QUESTION, "language": "he", "min_score": 1}).json()
    assert empty["results"] == [] and "minimum relevance 1" in empty["reason"]
    problem = _problem(c.post("/ask", json={"question": QUESTION, "min_score": 1.5}), 400)
    assert "'min_score' must be a number between 0 and 1" in problem["detail"]


def test_annotate_offsets(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    r = c.post("/annotate", json={"text": QUESTION, "language": "he"})
    assert r.status_code == 200, r.text
    body = r.json()
    for m in body["mentions"]:
        assert QUESTION[m["start"]:m["end"]] == m["text"]
    assert any(m["ambiguous"] for m in body["mentions"])


def test_explain_json_html_and_turtle(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    iri = c.post("/ask", json={"question": QUESTION, "language": "he"}).json()["question_iri"]
    r = c.get("/explain", params={"iri": iri})
    assert r.status_code == 200
    body = r.json()
    assert body["iri"] == iri and body["summary"]["mentions"] and body["text"]
    assert any(node.get("@id") == iri for node in body["graph"])
    r = c.get("/explain", params={"iri": iri}, headers={"Accept": "text/html"})
    assert r.headers["content-type"].startswith("text/html") and '<svg class="explanation-graph"' in r.text
    r = c.get("/explain", params={"iri": iri}, headers={"Accept": "text/turtle"})
    assert r.headers["content-type"].startswith("text/turtle") and "kgr:" in r.text
    _problem(c.get("/explain", params={"iri": "not an iri"}), 404)   # no id of anything here
    _problem(c.get("/explain"), 400)


def test_explain_why_a_result_answered(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    a = c.post("/ask", json={"question": QUESTION, "language": "he", "focus": [17, 22]}).json()
    q, doc = a["question_iri"], a["results"][0]["iri"]
    body = c.get("/explain", params={"iri": q, "document": doc}).json()
    links = body["summary"]["result"]["links"]
    assert body["summary"]["result"]["document"] == doc
    assert any(x["counted"] > 0 and x["question_concept"] == BRANCH for x in links)
    assert "why it answered" in body["text"]
    page = c.get("/", params={"q": QUESTION, "lang": "he"}).text
    assert 'class="why"' in page and "document=" in page   # each result links to its reason
    r = c.get("/explain", params={"iri": q, "document": doc}, headers={"Accept": "text/html"})
    assert r.status_code == 200 and "why it answered" in r.text
    _problem(c.get("/explain", params={"iri": doc, "document": doc}), 400)     # not a question
    _problem(c.get("/explain", params={"iri": q, "document": "https://example.org/x"}), 404)
    _problem(c.get("/explain", params={"iri": q, "document": "http://bad iri"}), 400)


def test_explain_unknown_iri_is_404_and_a_concept_is_described(
        api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    _problem(c.get("/explain", params={"iri": "https://example.org/nothing"}), 404)
    r = c.get("/explain", params={"iri": "https://example.org/nothing"}, headers={"Accept": "text/html"})
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    body = c.get("/explain", params={"iri": BRANCH}).json()
    assert any(row["object"] == "branch" for row in body["summary"]["resource"])
    r = c.get("/explain", params={"iri": BRANCH}, headers={"Accept": "text/html"})
    assert r.status_code == 200 and "prefLabel" in r.text


@pytest.mark.parametrize("kwargs,status", [
    ({"json": {}}, 400),
    ({"json": {"question": ""}}, 400),
    ({"json": {"question": QUESTION, "k": 0}}, 400),
    ({"json": {"question": QUESTION, "k": "3"}}, 400),
    ({"json": {"question": QUESTION, "min_score": 2}}, 400),
    ({"json": {"question": QUESTION, "min_score": "high"}}, 400),
    ({"json": {"question": QUESTION, "focus": [1]}}, 400),
    ({"json": {"question": QUESTION, "language": "xx-not-a-language"}}, 400),
    ({"json": "not an object"}, 400),   # a list is a batch (test_service_ask_batch.py)
    ({"json": ["a", {"question": "x" * 2001}]}, 400),
    ({"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
    ({"content": b"question=x", "headers": {"Content-Type": "application/x-www-form-urlencoded"}}, 415),
    ({"content": b"{" + b" " * 200_000 + b"}", "headers": {"Content-Type": "application/json"}}, 413),
])
def test_ask_errors_are_problems(api: tuple[httpx.Client, KnowledgeGraph], kwargs: dict,
                                 status: int) -> None:
    c, _ = api
    _problem(c.post("/ask", **kwargs), status)


def test_a_question_of_unknown_words_is_200_with_no_results_and_a_reason(
        api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    before = c.get("/stats").json()["triples"]
    r = c.post("/ask", json={"question": "qwertyuiop zxcvbnm", "k": 3})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["results"] == [] and a["mentions"] == [] and "no known concept" in a["reason"]
    assert c.get("/stats").json()["triples"] == before  # nothing recorded
    assert c.post("/ask", json={"question": QUESTION, "language": "he"}).json()["reason"] == ""
    page = c.get("/", params={"q": "qwertyuiop zxcvbnm"})
    assert page.status_code == 200 and "no known concept" in page.text


def test_a_keyword_says_which_language_was_assumed(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    a = c.post("/ask", json={"question": "Zug", "k": 2}).json()
    assert a["lang"] == "de" and a["language"]["source"] == "labels" and a["results"]
    a = c.post("/ask", json={"question": "Bank", "k": 2}).json()
    assert a["language"]["langs"] == ["de", "en"]
    ann = c.post("/annotate", json={"text": "Hahn"}).json()
    assert ann["lang"] == "de" and ann["language"]["source"] == "labels" and ann["mentions"]
    page = c.get("/", params={"q": "Zug"})
    assert page.status_code == 200 and "language: de (assumed" in page.text
    given = c.post("/ask", json={"question": QUESTION, "language": "he"}).json()["language"]
    assert given == {"lang": "he", "source": "given", "langs": ["he"], "note": "he (given)"}


def test_focus_may_be_the_word_and_explain_a_short_id(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    by_word = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 3, "focus": "בדים"})
    by_span = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 3, "focus": [17, 22]})
    assert by_word.status_code == 200, by_word.text
    assert [r["id"] for r in by_word.json()["results"]] == [r["id"] for r in by_span.json()["results"]]
    _problem(c.post("/ask", json={"question": QUESTION, "focus": "nothing"}), 400)
    short = by_word.json()["question_iri"].rsplit("/", 1)[-1]
    r = c.get("/explain", params={"iri": short}, headers={"Accept": "application/json"})
    assert r.status_code == 200 and r.json()["iri"] == by_word.json()["question_iri"]


def test_a_mistyped_wsd_mode_is_bad_input_not_a_server_fault(
        api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    for path, body in (("/ask", {"question": QUESTION}), ("/annotate", {"text": QUESTION})):
        detail = _problem(c.post(path, json={**body, "wsd": "bogus"}), 400)["detail"]
        assert "unknown sense selection mode 'bogus'" in detail and "llm,knowledge" in detail
    doc = {"id": "rest-test-wsd", "text": "The branches bend.", "lang": "en"}
    _problem(c.post("/documents", params={"wsd": "bogus"}, json=doc, headers=AUTH), 400)
    assert "rest-test-wsd" not in {d["id"] for d in c.get("/documents").json()["documents"]}
    r = c.post("/ask", json={"question": QUESTION, "language": "he", "wsd": " NONE "})
    assert r.status_code == 200 and r.json()["wsd"] == "none"


def test_documents_need_the_token(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    doc = {"id": "rest-test-1", "text": "Cut the dead branches of the fruit trees.", "lang": "en"}
    r = c.post("/documents", json=doc)
    assert _problem(r, 401)
    assert r.headers["www-authenticate"].startswith("Bearer")
    _problem(c.post("/documents", json=doc, headers={"Authorization": "Bearer nope"}), 401)
    _problem(c.delete("/documents/rest-test-1"), 401)


def test_document_lifecycle_json_and_upload(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    doc = {"id": "rest-test-2", "text": "Cut the dead branches of the old fruit trees in winter.",
           "lang": "en", "title": "Winter pruning"}
    r = c.post("/documents", json=doc, headers=AUTH)
    assert r.status_code == 201, r.text
    assert r.json()["ids"] == ["rest-test-2"] and r.json()["documents"] == 1
    md = b"# Orchard note\n\nThe branches bend under the weight of the fruit.\n"
    r = c.post("/documents", files={"file": ("rest-test-3.md", md, "text/markdown")},
               data={"lang": "en"}, headers=AUTH)
    assert r.status_code == 201, r.text
    assert r.json()["ids"] == ["rest-test-3"]
    ids = {d["id"] for d in c.get("/documents").json()["documents"]}
    assert {"rest-test-2", "rest-test-3"} <= ids
    for i in ("rest-test-2", "rest-test-3"):
        assert c.delete(f"/documents/{i}", headers=AUTH).status_code == 204
    _problem(c.delete("/documents/rest-test-2", headers=AUTH), 404)
    ids = {d["id"] for d in c.get("/documents").json()["documents"]}
    assert not ids & {"rest-test-2", "rest-test-3"}


def test_uploads_are_checked_like_the_cli(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    body = _problem(c.post("/documents", files={"file": ("x.pdf", b"%PDF-1.4", "application/pdf")},
                           headers=AUTH), 400)
    assert "not a readable PDF" in body["detail"]
    _problem(c.post("/documents", files={"file": ("bin.txt", b"\x00\x01\x02" * 10, "text/plain")},
                    headers=AUTH), 400)
    _problem(c.post("/documents", files={"file": ("big.txt", b"a" * 30_000, "text/plain")},
                    headers=AUTH), 400)
    _problem(c.post("/documents", files={"file": ("huge.txt", b"a" * 200_000, "text/plain")},
                    headers=AUTH), 413)
    _problem(c.post("/documents", content=b"x", headers={**AUTH, "Content-Type": "text/plain"}), 415)
    _problem(c.post("/documents", json={"documents": []}, headers=AUTH), 400)


def test_unexpected_error_is_a_500_problem_and_the_service_stays_up(
        api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, kg = api

    def broken() -> dict[str, Any]:
        raise RuntimeError("secret internal detail")

    kg.stats = broken  # type: ignore[method-assign]
    try:
        body = _problem(c.get("/stats"), 500)
        assert "secret internal detail" not in str(body)
    finally:
        del kg.stats
    assert c.get("/health").status_code == 200
    assert c.get("/stats").status_code == 200


def test_unknown_route_and_method(api: tuple[httpx.Client, KnowledgeGraph]) -> None:
    c, _ = api
    _problem(c.get("/nope"), 404)
    _problem(c.get("/ask"), 405)


def test_ask_stays_fast_while_endless_sparql_queries_run() -> None:
    """The public /sparql endpoint has its own killable executor: with every query slot held
    by an endless query, /ask still answers every request, quickly."""
    import threading
    import time

    cfg = Settings(query_timeout=4.0)
    kg = KnowledgeGraph(demo_store(), cfg)
    endless = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c . ?d ?e ?f . ?h ?i ?j . "
               "?k ?l ?m } }")
    with serve(create_app(kg, cfg, slots=3)) as url, httpx.Client(base_url=url, timeout=30) as c:
        c.post("/ask", json={"question": QUESTION, "language": "he"})  # warm
        statuses: list[int] = []
        attackers = [threading.Thread(target=lambda: statuses.append(
            httpx.get(url + "/sparql", params={"query": endless}, timeout=30).status_code))
            for _ in range(4)]
        for t in attackers:
            t.start()
        time.sleep(0.5)
        took = []
        for _ in range(10):
            t0 = time.monotonic()
            r = c.post("/ask", json={"question": QUESTION, "language": "he", "k": 3})
            took.append(time.monotonic() - t0)
            assert r.status_code == 200
        for t in attackers:
            t.join(30)
    assert sorted(statuses) == [503] * 4      # 3 stopped at the deadline, 1 refused as busy
    took.sort()
    assert took[len(took) // 2] < 1.0 and took[-1] < 3.0, took  # the deadline is 4 s
