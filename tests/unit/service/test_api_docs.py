"""``GET /docs`` rendered from the OpenAPI document: every operation and schema, every ``$ref``
a link to a table on the page, hostile text from the document escaped."""

from __future__ import annotations

import copy
import re

from kg_rag.service.api_docs import docs_page
from kg_rag.service.openapi import openapi_document

METHODS = ("get", "post", "put", "patch", "delete")


def test_every_operation_and_schema_is_on_the_page_and_every_link_lands() -> None:
    doc = openapi_document()
    page = docs_page(doc)
    ops = [(p, m, item[m]) for p, item in doc["paths"].items() for m in METHODS if m in item]
    assert page.count('<div class="op"') == len(ops) >= 10
    for _, _, op in ops:
        assert f'id="op-{op["operationId"]}"' in page
    for name in doc["components"]["schemas"]:
        assert f'id="schema-{name}"' in page
    anchors = set(re.findall(r'id="([^"]+)"', page))
    links = set(re.findall(r'href="#([^"]+)"', page))
    assert links and links <= anchors
    # the fields of a request body, with what is required and the new min_score
    ask = page[page.index('id="schema-AskRequest"'):]
    assert "<code>question</code> <b>*</b>" in ask and "<code>min_score</code>" in ask
    # nothing external: no script or style is loaded from anywhere
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', page)
    # try it: the JSON operations without a token, GET forms with query parameters
    assert 'data-path="/ask"' in page and 'data-path="/annotate"' in page
    assert 'data-path="/documents"' not in page   # needs the token
    assert '<form class="try-get" method="get" action="/explain">' in page


def test_text_from_the_document_is_escaped() -> None:
    doc = copy.deepcopy(openapi_document())
    doc["info"]["description"] = "<script>alert(1)</script>"
    doc["paths"]["/ask"]["post"]["summary"] = '"><img src=x onerror=alert(2)>'
    page = docs_page(doc)
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
