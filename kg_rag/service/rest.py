"""The REST API over :class:`kg_rag.api.KnowledgeGraph`.

``POST /annotate``, ``POST /ask``, ``GET /explain``, ``GET|POST /documents``,
``GET /documents/{id}``, ``DELETE /documents/{id}`` (writes need the bearer token), ``GET /stats``, ``GET /openapi.json``.
Pipeline calls run in worker threads; errors become problem+json (:mod:`.problems`).
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from kg_rag import Explanation, WsdMode
from kg_rag.api import KnowledgeGraph, check_min_relevance
from kg_rag.documents import SourceDocument, doc_from_record
from kg_rag.documents.readers import check_unique_ids, read_path
from kg_rag.errors import InputError, KgRagError
from kg_rag.serialize import answer_dict, language_dict, mention_dict
from kg_rag.service.bodies import (
    BodyTooLarge,
    UnsupportedMediaType,
    media_type,
    parse_json,
    query_params,
    read_body,
)
from kg_rag.service.llm_pool import LlmPool
from kg_rag.service.openapi import openapi_document
from kg_rag.service.problems import problem_body
from kg_rag.service.recording import QuestionRing
from kg_rag.service.sparql_endpoint import Forbidden, check_token
from kg_rag.settings import Settings

log = logging.getLogger(__name__)

JSON_LIMIT = 64 * 1024          # /ask and /annotate bodies
MAX_BATCH = 20                  # questions in one batch POST /ask
BATCH_LIMIT = 4 * JSON_LIMIT    # a batch POST /ask body
MAX_UPLOAD_FILES = 20
_SAFE_NAME = re.compile(r"[^\w.\-]+")


class RestApi:
    def __init__(self, kg: KnowledgeGraph, config: Settings) -> None:
        self.kg = kg
        self.config = config
        self.ready = threading.Event()
        self._warm_lock = threading.Lock()
        self.ring = QuestionRing(kg, config)
        #: questions that ask an LLM run here, apart from everything else (:mod:`.llm_pool`)
        self.llm = LlmPool(kg, config.llm_concurrency)

    # --- warm-up: build the lexicon once, before (or at) the first question ----------------
    def warm_up(self) -> None:
        with self._warm_lock:
            if self.ready.is_set():
                return
            try:
                _ = self.kg.annotator
                self.kg.selector()
            except Exception:  # noqa: BLE001 - the first request reports the error properly
                log.warning("warm-up failed", exc_info=True)
            finally:
                self.ready.set()

    def start(self) -> None:
        """The service's warm-up thread: :meth:`warm_up`, then the store's lemma and evidence
        indexes built or opened (:meth:`KnowledgeGraph.prepare_indexes`: a minute on a
        large vocabulary the first time; questions are answered meanwhile, by per-call queries
        — about twice as slow to analyse without them on OEWN with OMW)."""
        self.warm_up()
        try:
            self.kg.prepare_indexes()
        except Exception:  # noqa: BLE001 - lookups stay per call; the service runs on
            log.warning("building the lemma and evidence indexes failed; lookups stay per call",
                        exc_info=True)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.ready.is_set():
            self.warm_up()
        return fn(*args, **kwargs)

    # --- endpoints ------------------------------------------------------------------------
    async def annotate(self, request: Request) -> Response:
        body = await _json_object(request, JSON_LIMIT)
        text = _str(body, "text", required=True)
        wsd = _wsd(_str(body, "wsd"))
        scheme = _str(body, "scheme")
        guess, reports = await self.llm.run(wsd, self._call, self.kg.annotate_text, text,
                                            _str(body, "language"), wsd, self.ring.enabled,
                                            scheme)
        await run_in_threadpool(self.ring.trim)
        assert text is not None  # required=True
        return JSONResponse({"text": self.kg.question_text(text), "lang": guess.lang,
                             "language": language_dict(guess),
                             "mentions": [mention_dict(r) for r in reports]})

    async def ask(self, request: Request) -> Response:
        """One question (a JSON object), or a batch (a JSON list of up to :data:`MAX_BATCH`
        question objects or strings) answered in order; every item of a batch is checked before
        any is asked, and a question the pipeline refuses (e.g. a focus word it does not
        contain) gets its problem in its place instead of failing the others."""
        body = await _json_value(request, BATCH_LIMIT)
        if isinstance(body, list):
            batch = batch_arguments(body)
            answers = await run_in_threadpool(self._ask_batch, batch)
            await run_in_threadpool(self.ring.trim)
            return JSONResponse(answers)
        if not isinstance(body, dict):
            raise InputError("the body must be a JSON object (one question) or a list of them "
                             "(a batch)")
        arguments = ask_arguments(body)
        answer = await self.llm.run(arguments.get("wsd"), self._call, self.kg.ask, **arguments,
                                    record_question=self.ring.enabled)
        await run_in_threadpool(self.ring.trim)
        return JSONResponse(answer_dict(answer))

    def _ask_batch(self, batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for args in batch:
            try:
                answer = self._call(self.kg.ask, **args, record_question=self.ring.enabled)
            except KgRagError as e:
                if e.http_status >= 500:   # the store or the selector failed: the whole batch
                    raise
                out.append({"error": problem_body(e.http_status, e.title, str(e))})
                continue
            out.append(answer_dict(answer))
        return out

    async def explain(self, request: Request) -> Response:
        """JSON (summary, readable text, JSON-LD graph); HTML for browsers; Turtle/JSON-LD raw.

        A question, document, annotation or decision gets its explanation graph; any other
        resource in the store (a concept, a sense) what the store says about it; else 404.
        """
        want = preferred(request.headers.get("accept", ""),
                         ("application/json", "text/html", "application/ld+json", "text/turtle"))
        try:
            params = query_params(request)
            ex = await run_in_threadpool(self._explanation, params.get("iri", ""),
                                         params.get("document"))
        except KgRagError as e:
            if want != "text/html":
                raise
            from kg_rag.service.page import error_page

            return HTMLResponse(error_page("", "auto", "", e), status_code=e.http_status)
        if want == "text/html":
            from kg_rag.service.explain_page import concept_iris, explanation_page

            english = await run_in_threadpool(self._call, self.kg.labels, concept_iris(ex.summary), "en")
            return HTMLResponse(explanation_page(ex, english))
        if want == "application/ld+json":
            return Response(ex.jsonld(), media_type="application/ld+json")
        if want == "text/turtle":
            return Response(ex.turtle(), media_type="text/turtle; charset=utf-8")
        return JSONResponse({"iri": ex.root, "summary": ex.summary, "text": ex.text(),
                             "graph": json.loads(ex.jsonld())})

    def _explanation(self, iri: str, document: str | None = None) -> Explanation:
        if not iri:
            raise InputError("missing 'iri' query parameter")
        if document is not None:  # why a result answered its question
            why: Explanation = self._call(self.kg.explain, iri, document)
            return why
        described: Explanation = self._call(self.kg.describe, iri)
        return described

    async def documents(self, request: Request) -> Response:
        if request.method == "POST":
            return await self.add_documents(request)
        return await self.list_documents(request)

    async def list_documents(self, request: Request) -> Response:
        docs = await run_in_threadpool(self.kg.documents)
        return JSONResponse({"documents": docs})

    async def add_documents(self, request: Request) -> Response:
        self._check_writes()
        check_token(request, self.config.service_token)
        limit = 2 * self.config.max_document_bytes + 65_536
        mtype, _ = media_type(request)
        if mtype == "application/json":
            docs = _json_documents(await _json_object(request, limit), self.config.max_document_bytes)
        elif mtype == "multipart/form-data":
            await read_body(request, limit)
            docs = await self._uploaded_documents(request)
        else:
            raise UnsupportedMediaType("POST documents as application/json or multipart/form-data")
        wsd = _wsd(request.query_params.get("wsd") or None)
        report = await run_in_threadpool(self._write, self.kg.index_documents, docs, wsd)
        return JSONResponse({"documents": report.documents, "passages": report.passages,
                             "mentions": report.mentions, "ambiguous": report.ambiguous,
                             "decided": report.decided, "reused": report.reused,
                             "languages": report.languages, "seconds": round(report.seconds, 3),
                             "ids": [d.id for d in docs]}, status_code=201)

    async def get_document(self, request: Request) -> Response:
        doc_id = request.path_params["doc_id"]
        return JSONResponse(await run_in_threadpool(self.kg.document, doc_id))

    async def document(self, request: Request) -> Response:
        if request.method == "DELETE":
            return await self.delete_document(request)
        return await self.get_document(request)

    async def delete_document(self, request: Request) -> Response:
        self._check_writes()
        check_token(request, self.config.service_token)
        doc_id = request.path_params["doc_id"]
        await run_in_threadpool(self._write, self.kg.delete, doc_id)
        return Response(status_code=204)

    async def stats(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.kg.stats))

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(openapi_document())

    def _check_writes(self) -> None:
        if self.config.read_only:
            raise Forbidden("this service is read-only (kg-rag serve --read-only): it writes nothing")

    def _write(self, fn: Any, *args: Any) -> Any:
        with self.kg.write_lock:   # the knowledge graph's one writer lock (its writes take it too)
            return self._call(fn, *args)

    async def _uploaded_documents(self, request: Request) -> list[SourceDocument]:
        limit = self.config.max_document_bytes
        async with request.form(max_files=MAX_UPLOAD_FILES, max_fields=20,
                                max_part_size=limit + 1024) as form:
            files = [f for f in form.getlist("file") if isinstance(f, UploadFile)]
            if not files:
                raise InputError("upload the documents as form field 'file' (one or more)")
            lang = form.get("lang")
            with tempfile.TemporaryDirectory(prefix="kgr-upload-") as tmp:
                paths = []
                for f in files:
                    name = _SAFE_NAME.sub("_", Path(f.filename or "upload.txt").name).strip("._")
                    path = Path(tmp) / (name or "upload.txt")
                    if path.exists():
                        raise InputError(f"two uploaded files are named {name!r}")
                    path.write_bytes(await f.read(limit + 1))
                    paths.append(path)
                docs = await run_in_threadpool(_read_uploads, paths, limit)
        if isinstance(lang, str) and lang:
            docs = [SourceDocument(d.id, d.text, d.lang or lang, d.title, d.source, d.metadata)
                    for d in docs]
        # an upload's temporary file is no folder or file to re-index: no root is recorded
        return [replace(d, root="") for d in docs]

    def routes(self) -> list[Route]:
        return [
            Route("/annotate", self.annotate, methods=["POST"]),
            Route("/ask", self.ask, methods=["POST"]),
            Route("/explain", self.explain, methods=["GET"]),
            Route("/documents", self.documents, methods=["GET", "POST"]),
            Route("/documents/{doc_id:path}", self.document, methods=["GET", "DELETE"]),
            Route("/stats", self.stats, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
        ]


def preferred(accept: str, offered: tuple[str, ...]) -> str:
    """The offered media type the Accept header likes best (the first offered on a tie)."""
    best, best_q = offered[0], -1.0
    for i, media in enumerate(offered):
        q = 0.0
        for part in accept.split(","):
            fields = [f.strip() for f in part.split(";")]
            if fields[0] in (media, "*/*", media.split("/")[0] + "/*"):
                qv = next((f[2:] for f in fields[1:] if f.startswith("q=")), "1")
                try:
                    q = max(q, float(qv) - (0.001 if fields[0].endswith("*") else 0) - i * 1e-6)
                except ValueError:
                    continue
        if q > best_q:
            best, best_q = media, q
    return best if best_q > 0 or not accept.strip() else offered[0]


async def _json_value(request: Request, limit: int) -> Any:
    """The JSON body (any value); a body over ``limit`` bytes is refused (413)."""
    mtype, _ = media_type(request)
    if mtype != "application/json":
        raise UnsupportedMediaType(f"send application/json, not {mtype or 'no media type'}")
    raw = await read_body(request, limit)
    data = parse_json(raw)
    if isinstance(data, dict) and limit > JSON_LIMIT and len(raw) > JSON_LIMIT:
        raise BodyTooLarge(f"one question's body may have at most {JSON_LIMIT} bytes")
    return data


async def _json_object(request: Request, limit: int) -> dict[str, Any]:
    data = await _json_value(request, limit)
    if not isinstance(data, dict):
        raise InputError("the body must be a JSON object")
    return data


def _read_uploads(paths: list[Path], limit: int) -> list[SourceDocument]:
    """The documents of the uploaded files (saved under their own, sanitised names in a
    temporary folder): errors and sources name each file as uploaded (``notes.jsonl:2``), never
    the temporary folder."""
    return check_unique_ids([d for p in paths for d in read_path(p, limit, name=p.name)])


def batch_arguments(items: list[Any]) -> list[dict[str, Any]]:
    """Validated :meth:`KnowledgeGraph.ask` arguments of every question of a batch (before any
    is asked): each item an ask object or the question as a string."""
    if not items:
        raise InputError(f"the batch is empty: send 1 to {MAX_BATCH} questions")
    if len(items) > MAX_BATCH:
        raise InputError(f"a batch may have at most {MAX_BATCH} questions, not {len(items)}; "
                         f"split it")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"question": item}
        if not isinstance(item, dict):
            raise InputError(f"[{i}]: each question must be an object like "
                             f'{{"question": "…"}} or a string')
        try:
            args = ask_arguments(item)
            _check_question(args["question"], args["lang"])
        except InputError as e:
            raise InputError(f"[{i}]: {e}") from None
        out.append(args)
    return out


def _check_question(question: str, lang: str | None) -> None:
    """The checks :meth:`KnowledgeGraph.ask` makes of its input first, made for every item of a
    batch before any is asked."""
    from kg_rag.api import MAX_QUESTION_CHARS
    from kg_rag.text.langid import check_language
    from kg_rag.text.normalise import nfc, strip_bidi

    if lang and lang != "auto":
        check_language(lang)
    if len(nfc(strip_bidi(question)).strip()) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is longer than {MAX_QUESTION_CHARS} characters")


def _str(body: dict[str, Any], name: str, required: bool = False) -> str | None:
    v = body.get(name)
    if v is None:
        if required:
            raise InputError(f"missing '{name}' (a string)")
        return None
    if not isinstance(v, str):
        raise InputError(f"'{name}' must be a string")
    if required and not v.strip():
        raise InputError(f"'{name}' is empty")
    return v


def _wsd(value: str | None) -> WsdMode | None:
    """The sense selection mode a request names (None: the service's default); InputError."""
    return WsdMode.parse(value) if value else None


def ask_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """Validated keyword arguments of :meth:`KnowledgeGraph.ask` from a JSON body."""
    k = body.get("k", 10)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
        raise InputError("'k' must be an integer between 1 and 1000")
    focus = body.get("focus")
    if isinstance(focus, str) and not focus.strip():
        raise InputError("'focus' is empty: give the word or phrase the question is about")
    if focus is not None and not isinstance(focus, str):  # a string: the word or phrase itself
        if (not isinstance(focus, list) or len(focus) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in focus)):
            raise InputError("'focus' must be [start, end] character offsets or a word of the question")
        focus = (focus[0], focus[1])
    return {"question": _str(body, "question", required=True), "lang": _str(body, "language"),
            "k": k, "wsd": _wsd(_str(body, "wsd")), "focus": focus, "scheme": _str(body, "scheme"),
            "min_score": check_min_relevance(body.get("min_score", 0.0))}


def _json_documents(body: dict[str, Any], limit: int) -> list[SourceDocument]:
    records = body["documents"] if "documents" in body else [body]
    if not isinstance(records, list) or not records:
        raise InputError("'documents' must be a non-empty list of {id, text} objects")
    # strict: the OpenAPI schema (DocumentInput) declares id, title and lang strings
    docs = [doc_from_record(r, f"documents[{i}]", limit, strict=True) for i, r in enumerate(records)]
    ids = [d.id for d in docs]
    if len(set(ids)) != len(ids):
        raise InputError("a document id appears twice in the request")
    return docs
