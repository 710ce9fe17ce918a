"""The OpenAPI 3.0 description of the REST API, served at ``/openapi.json``.

Written by hand next to the handlers (:mod:`.rest`), checked against the running service by
schemathesis in the tests.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kg_rag import WsdMode, __version__

_PROBLEM = {"$ref": "#/components/schemas/Problem"}


def _problems(*codes: int) -> dict[str, Any]:
    text = {400: "bad input", 401: "missing or wrong bearer token", 403: "forbidden",
            404: "not found", 406: "not acceptable", 413: "request too large",
            415: "unsupported media type", 429: "rate limited (Retry-After: when to retry)", 500: "internal error",
            502: "sense selection failed", 503: "store unavailable"}
    return {str(c): {"description": text[c],
                     "content": {"application/problem+json": {"schema": _PROBLEM}}} for c in codes}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _obj(props: dict[str, Any], required: tuple[str, ...] = (), extra: bool = True) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        d["required"] = list(required)
    return d


_S = {"type": "string"}
_NS = {"type": "string", "nullable": True}
_IRI = {"type": "string", "pattern": "^(https?://|urn:)[^\\s<>\"{}|^`\\\\]+$"}
_I = {"type": "integer"}
_N = {"type": "number"}
_B = {"type": "boolean"}
_SCHEME = {"type": "string", "nullable": True,
           "description": "only readings of this concept scheme (IRI) or loaded source (name or "
                          "graph IRI, as `kg-rag sources` lists them)"}

SCHEMAS: dict[str, Any] = {
    "Problem": _obj({"type": _S, "title": _S, "status": _I, "detail": _S}, ("title", "status")),
    "Candidate": _obj({"id": _S, "concept": _S, "sense": _NS, "lemma": _S, "lang": _S,
                       "rank": {"type": "integer", "nullable": True}, "sense_key": _NS,
                       "ili": _NS, "pos": _NS, "matched_by": _S, "score": _N,
                       "scheme": _NS, "scheme_name": _S, "scheme_source": _NS, "source": _NS},
                      ("id", "concept")),
    "Mention": _obj({
        "text": _S, "start": _I, "end": _I, "lang": _S, "ambiguous": _B,
        "candidates": {"type": "array", "items": {"$ref": "#/components/schemas/Candidate"}},
        "chosen": {"allOf": [{"$ref": "#/components/schemas/Candidate"}], "nullable": True},
        "confidence": _N, "decision": _NS, "reused": _B,
        "selector": _obj({"name": _S, "version": _S, "model": _NS}),
        "reason": _S, "rationale": _S,
    }, ("text", "start", "end", "candidates")),
    "Result": _obj({
        "id": _S, "iri": _S,
        "relevance": {"type": "number", "minimum": 0, "maximum": 1, "description":
                      "the expected share of the question's words whose meaning the document "
                      "shares (README, Relevance); does not depend on the other documents"},
        "score": {"type": "number", "description": "the ranking score that orders the results "
                  "(rarity, repetition, focus boost): comparable within one answer only"},
        "lang": _S, "title": _S, "passage": _S,
        "passage_start": _I,
        "highlights": {"type": "array", "items": {"type": "array", "items": _I}},
        "concepts": {"type": "array", "items": _obj({"iri": _S, "label": _S, "weight": _N})},
        "decisions": {"type": "array", "items": _S},
        "contributions": {"type": "array", "description": "what the score sums, one per matched concept",
                          "items": _obj({"question_concept": _S, "document_concept": _S, "relation": _NS,
                                         "question_weight": _N, "question_probability": _N,
                                         "expansion_weight": _N, "focus_factor": _N,
                                         "idf": _N, "document_weight": _N, "document_agreement": _N,
                                         "annotations": _I,
                                         "counted": _N})},
    }, ("id", "iri", "relevance", "score", "passage")),
    "Language": _obj({
        "lang": _S, "langs": {"type": "array", "items": _S}, "note": _S,
        "source": {"type": "string", "enum": ["given", "script", "detected", "labels", "default"],
                   "description": "how lang was decided; labels: a short text whose words are "
                                  "labels in langs (the readings of each are candidates)"},
    }, ("lang", "source", "langs")),
    "Answer": _obj({
        "question": _S, "question_iri": _S, "lang": _S, "wsd": _S,
        "language": {"allOf": [{"$ref": "#/components/schemas/Language"}], "nullable": True},
        "mentions": {"type": "array", "items": {"$ref": "#/components/schemas/Mention"}},
        "results": {"type": "array", "items": {"$ref": "#/components/schemas/Result"}},
        "llm": _obj({"calls": _I, "tokens_in": _I, "tokens_out": _I}),
        "timings_ms": {"type": "object", "additionalProperties": _N},
        "reason": {"type": "string", "description":
                   "why results is empty ('' when there are results): no known concept in the "
                   "question (nothing was recorded, question_iri is ''), no document matches, or "
                   "min_score left out every document that matched"},
    }, ("question", "question_iri", "mentions", "results", "reason")),
    "AskRequest": _obj({
        "question": {"type": "string", "minLength": 1, "maxLength": 2000},
        "language": {"type": "string", "nullable": True, "description": "BCP 47 code or 'auto'"},
        "k": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 10},
        "wsd": {"type": "string", "nullable": True,
                "enum": [*(m.value for m in WsdMode), None],  # nullable enum: null listed (OpenAPI 3.0)
                "description": "sense selection mode (default: the service's KG_RAG_WSD)"},
        "focus": {"oneOf": [{"type": "array", "items": _I, "minItems": 2, "maxItems": 2},
                            {"type": "string", "minLength": 1}],
                  "nullable": True,
                  "description": "the word the question is about: [start, end) offsets, or the "
                                 "word or phrase itself ('bank#2': its second occurrence)"},
        "scheme": _SCHEME,
        "min_score": {"type": "number", "minimum": 0, "maximum": 1, "default": 0,
                      "description": "leave out documents whose relevance is below it (the "
                                     "answer's reason says so when none is left)"},
    }, ("question",)),
    "AnnotateRequest": _obj({"text": {"type": "string", "minLength": 1, "maxLength": 2000},
                             "language": _NS, "wsd": _NS, "scheme": _SCHEME}, ("text",)),
    "Document": _obj({
        "id": _S, "iri": _S, "title": _S, "lang": _S,
        "source": {"type": "string", "description": "where it was read from, relative to the "
                                                    "indexed folder ('' when not recorded)"},
        "text": _S,
        "annotations": {"type": "array", "items": _obj({
            "iri": _S, "start": _I, "end": _I, "text": _S,
            "candidates": {"type": "array", "items": _S},
            "chosen": {"type": "array", "items": _obj({"concept": _S, "label": _S},
                                                      ("concept",))},
            "decision": _NS}, ("iri", "start", "end", "candidates", "chosen"))},
    }, ("id", "iri", "lang", "text", "annotations")),
    "DocumentInput": _obj({"id": _S, "text": _S, "lang": _S, "title": _S,
                           "metadata": {"type": "object"}}, ("id", "text")),
}


def _sparql_responses() -> dict[str, Any]:
    media = ("application/sparql-results+json", "application/sparql-results+xml", "text/csv",
             "text/tab-separated-values", "text/turtle", "application/n-triples",
             "application/ld+json", "application/rdf+xml")
    return {"200": {"description": "results (X-KG-RAG-Truncated: true when rows were left out)",
                    "content": {m: {"schema": {}} for m in media}},
            **_problems(400, 403, 406, 413, 500, 503)}


def _rate_limited(paths: dict[str, Any]) -> dict[str, Any]:
    """Every operation but /health may answer 429: the per-client rate limit (.ratelimit)."""
    for path, ops in paths.items():
        if path != "/health":
            for op in ops.values():
                op["responses"].setdefault("429", _problems(429)["429"])
    return paths


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    return {
        "openapi": "3.0.3",
        "info": {"title": "kg-rag", "version": __version__,
                 "description": "Knowledge-graph retrieval with explainable word-sense selection. "
                                "The whole graph is also at /sparql (SPARQL 1.1 Protocol)."},
        "paths": _rate_limited({
            "/health": {"get": {"operationId": "health", "responses": {
                "200": _json(_obj({"status": _S, "store": _S, "updates": _B, "ready": _B},
                                  ("status",))),
                # after a write the store's engine failed (e.g. a full disk): why, and what to do
                "503": _json(_obj({"status": _S, "store": _S, "updates": _B, "ready": _B,
                                   "reason": _S}, ("status", "reason")))}}},
            "/stats": {"get": {"operationId": "stats", "responses": {
                "200": _json(_obj({"graphs": {"type": "object", "additionalProperties": _I},
                                   "triples": _I, "documents": _I})),
                **_problems(503)}}},
            "/ask": {"post": {
                "operationId": "ask", "summary": "Rank documents by the chosen concepts of a question",
                "description": "A JSON object asks one question. A JSON list (1 to 20 question "
                               "objects or strings) is a batch: every item is checked first, the "
                               "answers come in order, and an item the pipeline refuses gets "
                               "{\"error\": problem} in its place.",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"oneOf": [
                        {"$ref": "#/components/schemas/AskRequest"},
                        {"type": "array", "minItems": 1, "maxItems": 20, "items": {"oneOf": [
                            {"$ref": "#/components/schemas/AskRequest"},
                            {"type": "string", "minLength": 1, "maxLength": 2000}]}}]}}}},
                "responses": {"200": _json({"oneOf": [
                    {"$ref": "#/components/schemas/Answer"},
                    {"type": "array", "items": {"anyOf": [
                        {"$ref": "#/components/schemas/Answer"},
                        _obj({"error": {"$ref": "#/components/schemas/Problem"}}, ("error",))]}}]}),
                              **_problems(400, 413, 415, 429, 500, 502, 503)}}},
            "/annotate": {"post": {
                "operationId": "annotate", "summary": "Mentions, candidates and chosen senses",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/AnnotateRequest"}}}},
                "responses": {"200": _json(_obj({
                    "text": _S, "lang": _S, "language": {"$ref": "#/components/schemas/Language"},
                    "mentions": {"type": "array", "items": {"$ref": "#/components/schemas/Mention"}},
                }, ("mentions",))), **_problems(400, 413, 415, 429, 500, 502, 503)}}},
            "/explain": {"get": {
                "operationId": "explain",
                "summary": "The explanation graph of a question, document, annotation or decision; "
                           "with document=, why that document answered the question",
                "parameters": [{"name": "iri", "in": "query", "required": True, "schema": _IRI},
                               {"name": "document", "in": "query", "required": False, "schema": _IRI,
                                "description": "a result's doc_iri, when iri is the question"}],
                "responses": {"200": {"description": "summary, readable text and JSON-LD graph",
                                      "content": {
                                          "application/json": {"schema": _obj(
                                              {"iri": _S, "summary": {"type": "object"},
                                               "text": _S, "graph": {}}, ("iri", "summary"))},
                                          "text/html": {"schema": _S},
                                          "application/ld+json": {"schema": {}},
                                          "text/turtle": {"schema": _S}}},
                              **_problems(400, 404, 503)}}},
            "/documents": {
                "get": {"operationId": "listDocuments", "responses": {
                    "200": _json(_obj({"documents": {"type": "array", "items": _obj(
                        {"id": _S, "iri": _S, "lang": _S, "title": _S})}})),
                    **_problems(503)}},
                "post": {
                    "operationId": "addDocuments", "security": bearer,
                    "summary": "Index documents (JSON, or files as multipart field 'file')",
                    "parameters": [{"name": "wsd", "in": "query", "schema": _S}],
                    "requestBody": {"required": True, "content": {
                        "application/json": {"schema": {"oneOf": [
                            {"$ref": "#/components/schemas/DocumentInput"},
                            _obj({"documents": {"type": "array", "minItems": 1, "items": {
                                "$ref": "#/components/schemas/DocumentInput"}}}, ("documents",))]}},
                        "multipart/form-data": {"schema": _obj({
                            "file": {"type": "array", "items": {"type": "string",
                                                               "format": "binary"}},
                            "lang": _S}, ("file",))}}},
                    "responses": {"201": _json(_obj({"documents": _I, "ids": {
                        "type": "array", "items": _S}}), "indexed"),
                        **_problems(400, 401, 403, 413, 415, 502, 503)}}},
            "/sparql": {
                "get": {"operationId": "sparqlQuery",
                        "summary": "SPARQL 1.1 Protocol query (read-only; see the W3C protocol)",
                        "parameters": [
                            {"name": "query", "in": "query", "schema": _S,
                             "description": "without it: the SPARQL Service Description (a browser "
                                            "asking for text/html: a query form)"},
                            {"name": "default-graph-uri", "in": "query",
                             "schema": {"type": "array", "items": _IRI}},
                            {"name": "named-graph-uri", "in": "query",
                             "schema": {"type": "array", "items": _IRI}}],
                        "responses": _sparql_responses()},
                "post": {"operationId": "sparqlPost",
                         "summary": "SPARQL 1.1 Protocol query or update by POST",
                         "requestBody": {"required": True, "content": {
                             "application/x-www-form-urlencoded": {"schema": _obj(
                                 {"query": _S, "update": _S})},
                             "application/sparql-query": {"schema": _S},
                             "application/sparql-update": {"schema": _S}}},
                         "responses": {**_sparql_responses(), "204": {"description": "updated"},
                                       **_problems(401, 415)}}},
            "/documents/{doc_id}": {"get": {
                "operationId": "getDocument",
                "summary": "one indexed document: its text and its annotations with the "
                           "chosen concepts",
                "parameters": [{"name": "doc_id", "in": "path", "required": True, "schema": _S}],
                "responses": {"200": _json({"$ref": "#/components/schemas/Document"}),
                              **_problems(404, 503)}}, "delete": {
                "operationId": "deleteDocument", "security": bearer,
                "parameters": [{"name": "doc_id", "in": "path", "required": True, "schema": _S}],
                "responses": {"204": {"description": "deleted"},
                              **_problems(401, 403, 404, 503)}}},
        }),
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "KG_RAG_SERVICE_TOKEN"}},
        },
    }
