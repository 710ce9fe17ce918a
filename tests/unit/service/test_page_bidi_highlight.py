"""A document whose text holds bidi controls before a mention (a leading RLM, isolates, an
embedding): the page highlights exactly the mention's text, cut at the stored annotation
offsets, and no raw bidi control reaches the HTML."""

from __future__ import annotations

import html
import re

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument
from kg_rag.resources import resource_path
from kg_rag.serialize import answer_dict
from kg_rag.service.page import answer_page, highlighted
from kg_rag.store import EmbeddedStore
from kg_rag.text.normalise import strip_bidi

BIDI = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
TEXTS = {
    "rlm-first": "\u200fשלום bank account",
    "isolates": "intro \u2067x\u2069 and \u202bשלום\u202c then the \u202abank\u202c account",
}


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    demo = resource_path("demo")
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    g.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    g.index_documents([SourceDocument(id=i, text=t, lang="en") for i, t in TEXTS.items()])
    return g


def _marked(page: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", m)) for m in re.findall(r"<mark>(.*?)</mark>", page)]


def test_the_snippet_is_cut_at_the_stored_offsets_then_stripped() -> None:
    text = TEXTS["rlm-first"]
    assert text[6:10] == "bank"
    assert highlighted(text, [(6, 10, None)]) == "שלום <mark>bank</mark> account"


def test_the_page_highlights_each_mention_exactly(kg: KnowledgeGraph) -> None:
    for doc_id, text in TEXTS.items():
        anns = kg.document(doc_id)["annotations"]
        assert anns and all(text[a["start"]:a["end"]] == a["text"] for a in anns)
    answer = answer_dict(kg.ask("\u200fbank account", lang="en", k=5, record_question=False))
    assert {r["id"] for r in answer["results"]} == set(TEXTS)
    page = answer_page("bank account", "en", "", answer, {}, {}, {}, recorded=False)
    assert not BIDI & set(page)
    # the question's mention, then each result's highlighted mentions
    want = [strip_bidi(answer["question"][m["start"]:m["end"]]) for m in answer["mentions"]]
    for r in answer["results"]:
        want += [strip_bidi(r["passage"][s:e]) for s, e in r["highlights"]]
    assert want and set(want) == {"bank"}
    assert _marked(page) == want
