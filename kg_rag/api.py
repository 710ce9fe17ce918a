"""The Python API: :class:`KnowledgeGraph` — load, index, annotate, ask, explain.

The CLI, the service and the LangChain adapter are thin layers over this class.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode, Quad

from kg_rag.documents import SourceDocument, read_documents
from kg_rag.errors import InputError, NotFoundError
from kg_rag.explain.question import Explanation, explain
from kg_rag.model import Answer, MentionReport
from kg_rag.namespaces import KGR
from kg_rag.pipeline import record
from kg_rag.pipeline.decide import Decided, Unit, decide
from kg_rag.pipeline.index import IndexReport, index_documents
from kg_rag.pipeline.ranking_config import RetrievalConfig
from kg_rag.pipeline.retrieve import (
    expand,
    focus_mentions,
    mention_reading,
    question_concepts,
    rank,
)
from kg_rag.senses.base import SenseSelector
from kg_rag.senses.factory import make_selector
from kg_rag.settings import Settings, settings
from kg_rag.store import Change, Store, open_store
from kg_rag.text.normalise import nfc, strip_bidi

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000


class KnowledgeGraph:
    """One store and the pipeline over it. Thread-compatible for reads; one writer at a time."""

    def __init__(self, store: Store, config: Settings | None = None) -> None:
        self.store = store
        self.settings = config or settings()
        self._annotator: Any = None
        self._annotator_version: object = None
        self._selectors: dict[str, SenseSelector | None] = {}
        #: the ranking's parameters (``ask(expansion=…)`` replaces its expansion weights)
        self.retrieval = RetrievalConfig()

    @classmethod
    def open(cls, path: str | None = None, endpoint: str | None = None,
             update_endpoint: str | None = None, config: Settings | None = None) -> KnowledgeGraph:
        cfg = config or settings()
        return cls(open_store(path, endpoint, update_endpoint, cfg), cfg)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- parts ------------------------------------------------------------------------------
    @property
    def annotator(self) -> Any:
        from kg_rag.annotate import Annotator

        if self._annotator is None:
            self._annotator = Annotator(self.store)
        return self._annotator

    def invalidate(self) -> None:
        """Forget cached lexicon and selectors (after loading or dropping vocabularies)."""
        from kg_rag.pipeline import evidence
        from kg_rag.senses.knowledge import frames

        self._annotator = None
        self._selectors.clear()
        evidence.clear_cache(self.store)
        frames.clear_cache(self.store)

    def selector(self, wsd: str | None = None) -> SenseSelector | None:
        mode = (wsd or self.settings.wsd).strip().lower()
        if mode not in self._selectors:
            self._selectors[mode] = make_selector(mode, self.store, self.settings)
        return self._selectors[mode]

    # --- vocabularies -----------------------------------------------------------------------
    def load(self, paths: Iterable[str | Path], fmt: str = "auto", graph: str | None = None,
             progress: Callable[[int], None] | None = None) -> list[Any]:
        from loaders import load_file

        reports = [load_file(self.store, Path(p), fmt=fmt, graph=graph, progress=progress) for p in paths]
        self.invalidate()
        return reports

    # --- documents --------------------------------------------------------------------------
    def index(self, paths: Iterable[str | Path], lang: str | None = None, wsd: str | None = None,
              progress: Callable[[int], None] | None = None) -> IndexReport:
        docs = read_documents(paths, self.settings.max_document_bytes)
        if lang:
            docs = [replace(d, lang=d.lang or lang) for d in docs]
        return self.index_documents(docs, wsd=wsd, progress=progress)

    def index_documents(self, docs: Sequence[SourceDocument], wsd: str | None = None,
                        progress: Callable[[int], None] | None = None) -> IndexReport:
        limit = self.settings.max_document_bytes
        for d in docs:
            if len(d.text.encode("utf-8")) > limit:
                raise InputError(f"document {d.id!r} is over the limit of {limit} bytes "
                                 f"(set KG_RAG_MAX_DOCUMENT_BYTES to raise it)")
        mode = wsd or self.settings.wsd
        if mode == "none":
            mode = "knowledge"  # documents are always decided; --wsd none applies to matching
        return index_documents(self.store, docs, self.annotator, self.selector(mode), progress)

    def delete(self, doc_id: str) -> None:
        iri = record.doc_iri(doc_id)
        if iri not in self.store.named_graphs():
            raise NotFoundError(f"no document with id {doc_id!r} in this store")
        self.store.apply(Change(drop_graphs=[iri]))

    def delete_many(self, doc_ids: Iterable[str]) -> None:
        """Remove documents in one update (ids not in the store are ignored)."""
        graphs = [record.doc_iri(i) for i in doc_ids]
        if graphs:
            self.store.apply(Change(drop_graphs=graphs))

    def questions(self) -> list[dict[str, str]]:
        """Every recorded question (``ask``/``annotate`` keep one graph per distinct question,
        language and selector), newest first."""
        rows = self.store.select("select-questions")
        return [{"iri": r["q"].value, "text": r["text"].value, "lang": r["lang"].value,
                 "time": r["time"].value} for r in rows]

    def forget_questions(self, older_than: datetime | None = None,
                         iris: Iterable[str] | None = None) -> int:
        """Drop recorded questions — those asked before ``older_than``, or the given ``iris``,
        or all of them — in one update; returns how many. Their decisions stay (documents may
        share them, and they are reused when the question comes again)."""
        if older_than is not None and older_than.tzinfo is None:
            raise InputError("older_than needs a time zone (e.g. datetime.now(timezone.utc))")
        wanted = set(iris) if iris is not None else None
        drop = []
        for q in self.questions():
            if wanted is not None and q["iri"] not in wanted:
                continue
            if older_than is not None and datetime.fromisoformat(q["time"]) >= older_than:
                continue
            drop.append(q["iri"])
        if drop:
            self.store.apply(Change(drop_graphs=[NamedNode(i) for i in drop]))
        return len(drop)

    def documents(self) -> list[dict[str, str]]:
        rows = self.store.select("select-documents")
        return [{"id": r["id"].value, "iri": r["doc"].value, "lang": r["lang"].value,
                 "title": r["title"].value if "title" in r else ""} for r in rows]

    # --- questions --------------------------------------------------------------------------
    def _question(self, question: str, lang: str | None) -> tuple[str, str]:
        from kg_rag.text.langid import check_language, detect

        if not isinstance(question, str) or not question.strip():
            raise InputError("the question is empty; type a question")
        q = nfc(strip_bidi(question)).strip()
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        if lang and lang != "auto":
            code = check_language(lang)
        else:
            code = detect(q, default="en")
        return q, code

    def _analyse(self, q: str, lang: str, wsd: str, write: bool, require_concept: bool = False,
                 focus: tuple[int, int] | None = None,
                 extra: Sequence[Quad] = ()) -> tuple[Any, list[Decided], Any]:
        mentions = list(self.annotator.annotate(q, lang))
        if not mentions:
            if require_concept:
                raise InputError("no known concept in the question; rephrase it or load a "
                                 "vocabulary that covers its words")
            write = False  # nothing to record
        if focus is not None and not focus_mentions([(m.start, m.end) for m in mentions], focus):
            s, e = focus
            raise InputError(f"the focus {s}:{e} ({q[s:e]!r}) is no word or phrase of the loaded "
                             "vocabularies (function words are not annotated): nothing to rank by")
        unit = Unit(0, len(q), lang, q, mentions)
        selector = self.selector("knowledge" if wsd == "none" else wsd) if wsd != "none" else None
        outcome = decide(self.store, [unit], selector)
        iri = record.question_iri(q, lang, wsd)
        if write:
            quads = record.text_owner_quads(iri, KGR.Question, iri.value.rsplit("/", 1)[-1], q, lang, "", "")
            for d in outcome.decided:
                quads += record.annotation_quads(iri, iri, None, d.mention, d.chosen_concepts,
                                                     d.decision, d.reused)
            self.store.apply(Change(drop_graphs=[iri], insert=quads + list(extra) + outcome.decision_quads))
        return iri, outcome.decided, outcome

    def annotate(self, text: str, lang: str | None = None, wsd: str | None = None) -> list[MentionReport]:
        """Mentions of ``text`` with candidates and chosen senses (decisions are recorded)."""
        q, code = self._question(text, lang)
        mode = wsd or self.settings.wsd
        write = mode != "none"
        iri, decided, _ = self._analyse(q, code, mode, write=write)
        return [_report(d, iri if write and decided else None) for d in decided]

    def ask(self, question: str, lang: str | None = None, k: int = 10, wsd: str | None = None,
            focus: tuple[int, int] | None = None, expansion: dict[str, float] | None = None,
            exclude_ids: Iterable[str] = ()) -> Answer:
        """Annotate the question, decide its senses, rank documents by the chosen concepts."""
        t0 = time.perf_counter()
        if not isinstance(k, int) or k < 1 or k > 1000:
            raise InputError("k must be an integer between 1 and 1000")
        mode = (wsd or self.settings.wsd).strip().lower()
        q, code = self._question(question, lang)
        if focus is not None:
            s, e = focus
            if not (0 <= s < e <= len(q)):
                raise InputError(f"focus {s}:{e} is outside the question (0:{len(q)})")
        cfg = self.retrieval if expansion is None else self.retrieval.with_expansion(expansion)
        if mode == "none":
            cfg = replace(cfg, match="candidate")
        retrieval = record.retrieval_quads(record.question_iri(q, code, mode), cfg, k, mode, focus)
        iri, decided, outcome = self._analyse(q, code, mode, write=True, require_concept=True, focus=focus,
                                              extra=retrieval)
        t1 = time.perf_counter()
        concepts = question_concepts([mention_reading(d.mention, d.selection, d.decision.value if d.decision else None,
                                                      mode == "none", cfg) for d in decided], focus)
        expanded = expand(self.store, concepts, cfg)
        results = rank(self.store, expanded, k, code, cfg, exclude_ids=frozenset(exclude_ids))
        t2 = time.perf_counter()
        return Answer(
            question=q, question_iri=iri.value, lang=code,
            mentions=tuple(_report(d, iri) for d in decided), results=tuple(results), wsd=mode,
            llm_calls=outcome.llm_calls, tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out,
            timings_ms={"analyse": (t1 - t0) * 1000, "retrieve": (t2 - t1) * 1000},
        )

    def explain(self, iri: str, document: str | None = None) -> Explanation:
        """The explanation of a question, document, annotation or decision IRI; with
        ``document`` (a result's ``doc_iri``), of why that document answered the question."""
        if document is not None:
            from kg_rag.explain.result import explain_result

            return explain_result(self.store, iri, document)
        return explain(self.store, iri)

    def stats(self) -> dict[str, Any]:
        rows = self.store.select("select-named-graphs")
        graphs = {r["g"].value: int(r["n"].value) for r in rows}
        return {"graphs": graphs, "triples": sum(graphs.values()),
                "documents": sum(1 for g in graphs if g.startswith(record.doc_iri("").value))}


def _report(d: Decided, owner: NamedNode | None) -> MentionReport:
    """The report of one mention; ``owner`` is the question whose graph holds its annotation
    (None when nothing was written)."""
    return MentionReport(
        mention=d.mention, selection=d.selection,
        decision=d.decision.value if d.decision is not None else None,
        annotation=record.annotation_iri(owner, d.mention).value if owner is not None else None,
        reused=d.reused,
    )
