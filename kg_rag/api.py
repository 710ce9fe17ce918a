"""The Python API: :class:`KnowledgeGraph` — load, index, annotate, ask, explain.

The CLI, the service and the LangChain adapter are thin layers over this class.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from pyoxigraph import NamedNode, Quad

from kg_rag.align.model import AlignmentLink, AlignmentReport
from kg_rag.annotate import Annotator
from kg_rag.annotate.schemes import SchemeFilter
from kg_rag.derived import Derived
from kg_rag.documents import SourceDocument, read_documents
from kg_rag.errors import InputError, NotFoundError
from kg_rag.explain.question import Explanation, explain
from kg_rag.model import Answer, LanguageGuess, Mention, MentionReport
from kg_rag.namespaces import ID, KGR
from kg_rag.pipeline import record
from kg_rag.pipeline.decide import Decided, Outcome, Unit, decide
from kg_rag.pipeline.index import Detail, IndexReport, index_documents
from kg_rag.pipeline.ranking_config import RetrievalConfig
from kg_rag.pipeline.redecide import RedecideReport
from kg_rag.pipeline.relevance import check_min_relevance as check_min_relevance
from kg_rag.pipeline.retrieve import (
    expand,
    focus_mentions,
    mention_reading,
    question_concepts,
    ranked,
)
from kg_rag.pipeline.write import Owner, write_text
from kg_rag.senses.base import SenseSelector
from kg_rag.senses.factory import make_selector
from kg_rag.senses.mode import WsdMode
from kg_rag.settings import Settings, settings
from kg_rag.store import Change, Store, Values, check_not_empty, open_store
from kg_rag.text.focus import focus_span
from kg_rag.text.normalise import nfc, strip_bidi

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
#: the hash part of the IRIs kg-rag mints for questions, decisions and annotations
_HASH = re.compile(r"[0-9a-f]{24,64}")
_KIND_NAMES = {"question": "question", "decision": "decision", "ann": "annotation", "doc": "document"}
#: :attr:`Answer.reason` of a question none of whose words is a label or written form in the store
NO_CONCEPT = ("no known concept in the question: none of its words is a label or written form in "
              "this store; rephrase it, give its language, or load a vocabulary that covers it")
#: :attr:`Answer.reason` when the question's concepts are in no indexed document
NO_MATCH = "no indexed document mentions the question's concepts"


def no_match(min_score: float, cut: int, best: float) -> str:
    """:attr:`Answer.reason` of an answer without results: :data:`NO_MATCH`, or that the
    minimum relevance left out every document that matched."""
    if not cut:
        return NO_MATCH
    return (f"no document reaches the minimum relevance {min_score:g}: {cut} matched the "
            f"question's concepts, the most relevant at {best:.3f}")


class KnowledgeGraph:
    """One store and the pipeline over it. Thread-compatible for reads; one writer at a time
    (:attr:`write_lock`, held around every write: index, ask/annotate recording, load, drop)."""

    def __init__(self, store: Store, config: Settings | None = None) -> None:
        self.store = store
        self.settings = config or settings()
        #: everything derived from the store's contents (lexicon, knowledge base, caches)
        self.derived = Derived.of(store, Path(self.settings.cache_dir))
        #: the one writer lock of this knowledge graph; adapters take it, never one of their own
        self.write_lock = threading.RLock()
        # the annotator and selectors, valid for one generation of the registry
        self._parts: dict[str, object] = {}
        self._generation = -1
        #: the ranking's parameters (``ask(expansion=…)`` replaces its expansion weights)
        self.retrieval = RetrievalConfig()
        if not store.read_only:   # this process's writes keep the ranking's posting index current
            from kg_rag.pipeline import posting_index

            posting_index.follow(store)

    @classmethod
    def open(cls, path: str | None = None, endpoint: str | None = None,
             update_endpoint: str | None = None, config: Settings | None = None,
             read_only: bool = False, create: bool = True) -> KnowledgeGraph:
        """The knowledge graph of a store folder (``path``), a remote endpoint, or the settings'
        store. ``create=False``: a folder that does not exist is a StoreError, not a new empty
        store (a caller that only reads, given a mistyped path, leaves nothing behind)."""
        cfg = config or settings()
        return cls(open_store(path, endpoint, update_endpoint, cfg, read_only=read_only,
                              create=create), cfg)

    def close(self) -> None:
        self.store.close()

    def prepare_indexes(self) -> None:
        """Build (or open) the store's lemma and evidence indexes now: for a process that will
        look up many senses (``serve`` does it in the background after its warm-up); a large
        store is otherwise queried per call until some process has built them
        (:mod:`kg_rag.pipeline.evidence_index`)."""
        from kg_rag.pipeline.evidence_index import prepare

        prepare(self.store)

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- parts ------------------------------------------------------------------------------
    def _part(self, name: str, build: Callable[[], object]) -> object:
        """The annotator or a selector, rebuilt after the registry was invalidated."""
        with self.derived.lock:
            if self._generation != self.derived.generation:
                self._parts.clear()
                self._generation = self.derived.generation
            if name not in self._parts:
                self._parts[name] = build()
            return self._parts[name]

    @property
    def annotator(self) -> Annotator:
        from kg_rag.annotate import LexiconAnnotator, store_lexicon

        part = self._part("annotator", lambda: LexiconAnnotator(self.store, store_lexicon(self.store)))
        return cast(Annotator, part)

    def invalidate(self) -> None:
        """Forget everything derived from the store — lexicon, knowledge base, evidence, frames,
        decisions, annotator, selectors — in one call (after loading or dropping vocabularies)."""
        self.derived.invalidate()

    def mode(self, wsd: WsdMode | str | None = None) -> WsdMode:
        """The sense selection mode ``wsd`` names (None: the store's default set by ``eval wsd
        --set-default``, else the ``KG_RAG_WSD`` setting); InputError naming the modes for
        anything else."""
        if wsd is None or wsd == "":
            from kg_rag.senses.llm.client import endpoint_host
            from kg_rag.senses.store_default import resolve_default

            s = self.settings
            return cast(WsdMode, self._part("store-default", lambda: resolve_default(
                self.store, s.wsd, s.llm_model, endpoint_host(s.llm_base_url))))
        return WsdMode.parse(wsd)

    def selector(self, wsd: WsdMode | str | None = None) -> SenseSelector | None:
        mode = self.mode(wsd)
        part = self._part("selector:" + mode.value, lambda: make_selector(mode, self.store, self.settings))
        return cast("SenseSelector | None", part)

    # --- vocabularies -----------------------------------------------------------------------
    @staticmethod
    def load_formats() -> tuple[str, ...]:
        """The names :meth:`load` takes as ``fmt`` (syntaxes and source pipelines; ``auto``)."""
        from loaders import FORMATS

        return tuple(FORMATS)

    @staticmethod
    def load_targets(paths: str | Path | Iterable[str | Path], fmt: str = "auto",
                     graph: str | None = None) -> list[str]:
        """The graph IRI each file would be loaded into, the files checked together before
        anything is written: LoadError for a missing file, an unknown format, a bad ``graph``,
        or two different files that would go into one graph (:func:`loaders.check_targets`)."""
        from loaders import check_targets

        return [g.value for g in check_targets(_paths(paths), fmt, graph)]

    def load(self, paths: str | Path | Iterable[str | Path], fmt: str = "auto", graph: str | None = None,
             progress: Callable[[int], None] | None = None) -> list[Any]:
        from loaders import Limits, load_file

        paths = _paths(paths)
        self.load_targets(paths, fmt, graph)   # the files together, before anything is written
        limits = Limits.of(self.settings)
        with self.write_lock:
            try:
                return [load_file(self.store, Path(p), fmt=fmt, graph=graph, progress=progress,
                                  limits=limits)
                        for p in paths]
            finally:
                self.invalidate()

    # --- documents --------------------------------------------------------------------------
    def index(self, paths: str | Path | Iterable[str | Path], lang: str | None = None,
              wsd: WsdMode | str | None = None, progress: Callable[[int], None] | None = None,
              total: Callable[[int], None] | None = None, strict: bool = False,
              prune: bool = False, detail: Detail | None = None,
              executor: str | None = None, workers: int = 1) -> IndexReport:
        """Read the documents at ``paths`` (files or folders) and index them; ``lang`` for those
        that do not say. ``total(n)`` is called once with the number of documents read, then
        ``progress(1)`` after each document. A file in a folder that is no document (binary,
        empty, a .pdf without the documents extra, …) is skipped and named in the report's ``skipped``; ``strict``: it is an
        error instead, and nothing is indexed.

        The report's ``gone`` lists the documents indexed earlier from the same folders or files
        that this run did not read (a deleted file, a record left out of a JSON Lines file); they
        stay in the store, and a warning is logged, unless ``prune`` deletes them.

        ``executor`` ``dask://HOST:PORT``: the documents are indexed on that Dask cluster, each
        worker writing into this knowledge graph's remote endpoint (:mod:`kg_rag.cluster`).
        ``workers`` > 1: read, annotated and decided by that many forked processes, written by
        this one (:mod:`kg_rag.pipeline.parallel`)."""
        mode = self.mode(wsd)
        self.check_index_options(workers, executor)
        skipped: list[str] | None = None if strict else []
        docs = read_documents(_paths(paths), self.settings.max_document_bytes, skipped)
        if lang:
            docs = [replace(d, lang=d.lang or lang) for d in docs]
        if total is not None:
            total(len(docs))
        if executor is not None:
            rep = self._index_on_cluster(executor, docs, mode, progress)
        else:
            rep = self.index_documents(docs, wsd=mode, progress=progress, detail=detail,
                                       workers=workers)
        gone = self._gone(docs)
        if gone and prune:
            self.delete_many(gone)
        elif gone:
            log.warning("%d document(s) indexed earlier from the same folders or files are no "
                        "longer there and stay in the store (prune=True, kg-rag index --prune, "
                        "deletes them): %s%s", len(gone), ", ".join(gone[:10]),
                        ", …" if len(gone) > 10 else "")
        return replace(rep, skipped=list(skipped or []), gone=gone, pruned=bool(gone and prune))

    def _index_on_cluster(self, executor: str, docs: Sequence[SourceDocument], mode: WsdMode,
                          progress: Callable[[int], None] | None) -> IndexReport:
        from kg_rag.cluster import index_on_cluster
        from kg_rag.store import RemoteStore

        self.check_index_options(1, executor, remote=isinstance(self.store, RemoteStore))
        store = cast(RemoteStore, self.store)
        self._check_sizes(docs)
        wsd = (WsdMode.KNOWLEDGE if mode is WsdMode.NONE else mode).value
        return index_on_cluster(executor, store.endpoint, store.update_endpoint, store.token, docs,
                                wsd, progress)

    def _check_sizes(self, docs: Sequence[SourceDocument]) -> None:
        """InputError naming the first document over ``Settings.max_document_bytes``."""
        limit = self.settings.max_document_bytes
        for d in docs:
            if len(d.text.encode("utf-8")) > limit:
                raise InputError(f"document {d.id!r} is over the limit of {limit} bytes "
                                 f"(set KG_RAG_MAX_DOCUMENT_BYTES to raise it)")

    def _gone(self, docs: Sequence[SourceDocument]) -> list[str]:
        """Ids of the documents of the roots of ``docs`` (``kgr:indexRoot``) that are not
        among ``docs``."""
        from pyoxigraph import Literal

        read = {d.id for d in docs}
        gone: set[str] = set()
        for root in sorted({d.root for d in docs if d.root}):
            rows = self.store.select("select-documents-of-root", bind={"root": Literal(root)})
            gone.update(r["id"].value for r in rows if r["id"].value not in read)
        return sorted(gone)

    def index_documents(self, docs: Sequence[SourceDocument], wsd: WsdMode | str | None = None,
                        progress: Callable[[int], None] | None = None,
                        detail: Detail | None = None, workers: int = 1) -> IndexReport:
        """Index ``docs``; ``progress(1)`` after each document is written, ``detail(doc_id,
        stage, done, total)`` within each (:data:`~kg_rag.pipeline.index.Detail`: characters
        annotated, mentions decided; not with ``workers`` > 1, whose forked processes read,
        annotate and decide while this one writes: :mod:`kg_rag.pipeline.parallel`)."""
        if workers < 1:
            raise InputError(f"workers must be 1 or more, not {workers}")
        self._check_sizes(docs)
        mode = self.mode(wsd)
        if mode is WsdMode.NONE:
            mode = WsdMode.KNOWLEDGE  # documents are always decided; none applies to matching
        self.derived.refresh()   # another process may have loaded a vocabulary (remote store)
        from kg_rag.pipeline import posting_index, postings
        from kg_rag.pipeline.evidence_index import worth_building

        if worth_building(self.store, sum(len(d.text) for d in docs)):
            self.prepare_indexes()   # this run brings the runs without them to their cost
        with self.write_lock:
            posting_index.refresh(self.store)   # current now, the run's writes keep it so
            if workers > 1 and len(docs) > 1:
                from kg_rag.pipeline.parallel import index_parallel

                rep = index_parallel(self.store, docs, self.annotator, self.selector(mode),
                                     workers, progress)
            else:
                rep = index_documents(self.store, docs, self.annotator, self.selector(mode),
                                      progress, detail)
            postings.settle(self.store)   # every document has its postings: say so once
            return rep

    def redecide(self, wsd: WsdMode | str = WsdMode.LLM, documents: Iterable[str] | None = None,
                 below: float | None = None, limit: int | None = None, dry_run: bool = False,
                 progress: Callable[[int], None] | None = None,
                 total: Callable[[int], None] | None = None, batch: int = 16) -> RedecideReport:
        """Re-decide the stored decisions of indexed ``documents`` (ids; None: all) with the
        selector of ``wsd`` — those below probability ``below`` only, at most ``limit`` — each
        written as a new decision revising the old one, one update per document; the mentions
        of consecutive documents go to the selector ``batch`` at a time; ``dry_run`` decides
        and writes nothing (:mod:`kg_rag.pipeline.redecide`)."""
        from kg_rag.pipeline.redecide import check_options, redecide

        mode = self.mode(wsd)
        if mode is WsdMode.NONE:
            raise InputError("redecide needs a selector; none is label matching (use llm, "
                             "knowledge+llm, knowledge …)")
        check_options(below, limit)
        docs = None if documents is None else [documents] if isinstance(documents, str) else list(documents)
        selector = self.selector(mode)
        assert selector is not None
        return redecide(self.store, self.write_lock, self.annotator, selector, mode.value, docs,
                        below, limit, dry_run, progress, total, batch)

    def postings(self, rebuild: bool = False) -> dict[str, Any]:
        """The ranking's posting index (:mod:`kg_rag.pipeline.posting_index`): where it is and
        whether it is current; ``rebuild`` brings it to the store's stamp first (reads every
        posting of the store: minutes at tens of thousands of documents)."""
        from kg_rag.pipeline import posting_index

        if rebuild:
            self.store.check_writable()
            with self.write_lock:
                posting_index.refresh(self.store)
        return posting_index.status(self.store)

    def delete(self, doc_id: str) -> None:
        if not doc_id.strip():
            raise InputError("the document id is empty; `kg-rag documents` lists them")
        iri = record.doc_iri(doc_id)
        with self.write_lock:
            if iri not in self.store.named_graphs():
                raise NotFoundError(f"no document with id {doc_id!r} in this store")
            self.store.apply(Change(drop_graphs=[iri]))

    def delete_many(self, doc_ids: Iterable[str]) -> None:
        """Remove documents in one update (ids not in the store are ignored)."""
        graphs = [record.doc_iri(i) for i in doc_ids]
        if graphs:
            with self.write_lock:
                self.store.apply(Change(drop_graphs=graphs))

    def questions(self) -> list[dict[str, str]]:
        """Every recorded question (``ask``/``annotate`` keep one graph per distinct question,
        language and selector), newest first."""
        rows = self.store.select("select-questions")
        return [{"iri": r["q"].value, "text": r["text"].value, "lang": r["lang"].value,
                 "time": r["time"].value} for r in rows]

    def forget_questions(self, older_than: datetime | None = None,
                         iris: Iterable[str] | None = None, decisions: bool = False) -> int:
        """Drop recorded questions — those asked before ``older_than``, or the given ``iris``,
        or all of them — in one update; returns how many. Their decisions stay (documents may
        share them, and they are reused when the question comes again), unless ``decisions``:
        then the decisions that no other graph uses go too (the service's ring of questions)."""
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
            graphs = [NamedNode(i) for i in drop]
            with self.write_lock:
                used = [r["decision"] for r in self.store.select(
                    "select-question-decisions", values=Values.column("q", graphs))] if decisions else []
                self.store.apply(Change(drop_graphs=graphs))
                if used:
                    self.store.run_update("delete-unused-decisions",
                                          values=Values.column("decision", used))
        return len(drop)

    def document(self, doc_id: str) -> dict[str, Any]:
        """One indexed document: id, iri, title, lang, source, text and its annotations (span,
        text, candidate concepts, chosen concepts with labels, decision); NotFoundError."""
        from kg_rag.pipeline.document import document_record

        return document_record(self.store, doc_id, self.labels)

    def documents(self) -> list[dict[str, str]]:
        rows = self.store.select("select-documents")
        return [{"id": r["id"].value, "iri": r["doc"].value, "lang": r["lang"].value,
                 "title": r["title"].value if "title" in r else ""} for r in rows]

    # --- questions --------------------------------------------------------------------------
    def scheme_filter(self, scheme: str | None) -> SchemeFilter | None:
        """The ``scheme=`` filter of :meth:`annotate` and :meth:`ask`: a concept scheme IRI or a
        loaded source (graph IRI or name); None keeps every scheme. InputError when unknown."""
        if scheme is None:
            return None
        from kg_rag.annotate.schemes import resolve_scheme

        return resolve_scheme(self.store, scheme)

    @staticmethod
    def check_expansion(weights: Mapping[str, float]) -> None:
        """InputError unless ``weights`` can be :meth:`ask`'s ``expansion``: relations the ranking
        knows, weights from 0 to 1 (the LangChain retriever checks its field with it)."""
        from kg_rag.pipeline.ranking_config import DEFAULT

        DEFAULT.with_expansion(weights)

    @staticmethod
    def check_index_options(workers: int, executor: str | None = None, remote: bool = True) -> None:
        """InputError unless :meth:`index` can take ``workers`` and ``executor`` (a Dask
        scheduler, ``dask://HOST:PORT``) on a store that is ``remote`` or not; the CLI checks its
        options with it before it opens a store, so a refused option makes no new store folder."""
        if workers < 1:
            raise InputError(f"workers must be 1 or more, not {workers}")
        if executor is not None:
            from kg_rag.cluster import scheduler_address

            scheduler_address(executor)
            if workers > 1:
                raise InputError("workers and a cluster executor exclude each other: the "
                                 "cluster's workers index there")
            if not remote:
                raise InputError("indexing on a cluster needs a remote store (--endpoint) that "
                                 "every worker writes into; an embedded store takes one process")

    @staticmethod
    def question_text(question: str) -> str:
        """The question as it is annotated (NFC, no bidi controls, trimmed): the text the offsets
        of :meth:`annotate`'s and :meth:`ask`'s mentions point into."""
        return nfc(strip_bidi(question)).strip()

    def _question(self, question: str, lang: str | None,
                  scheme: SchemeFilter | None = None) -> tuple[str, LanguageGuess, list[Mention]]:
        """The question cleaned (NFC, no bidi controls), its language and its mentions."""
        from kg_rag.pipeline.language import question_language
        from kg_rag.text.langid import check_language

        self.derived.refresh()   # another process may have loaded a vocabulary (remote store)

        if not isinstance(question, str):
            raise InputError(f"the question must be text, not {type(question).__name__}")
        try:
            question.encode("utf-8")
        except UnicodeEncodeError:   # a lone surrogate (Python's stand-in for undecodable bytes)
            raise InputError("the question is not UTF-8 text (it holds a lone surrogate "
                             "code point)") from None
        q = self.question_text(question)
        if not q:   # empty once cleaned too: bidi marks and zero-width characters alone are none
            raise InputError("the question is empty; type a question")
        if lang and lang != "auto":
            check_language(lang)  # a bad code is bad input before anything else
        if len(q) > MAX_QUESTION_CHARS:
            raise InputError(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        annotator = self.annotator
        if scheme is None:
            annotate: Callable[[str, str], Sequence[Mention]] = annotator.annotate
        else:
            from kg_rag.annotate import LexiconAnnotator

            if not isinstance(annotator, LexiconAnnotator):
                raise InputError("this annotator cannot filter by scheme")
            lexicon_annotator = annotator

            def annotate(text: str, code: str) -> Sequence[Mention]:
                return lexicon_annotator.annotate(text, code, scheme=scheme)
        guess, mentions = question_language(q, lang, self.store, annotate)
        return q, guess, mentions

    def language(self, text: str, lang: str | None = None, scheme: str | None = None) -> LanguageGuess:
        """The language :meth:`ask` and :meth:`annotate` take ``text`` to be in, and why
        (``lang``: a code, or None/"auto" to detect it; ``scheme`` as they take it)."""
        return self._question(text, lang, self.scheme_filter(scheme))[1]

    def _analyse(self, q: str, lang: str, mentions: list[Mention], wsd: WsdMode, write: bool,
                 require_concept: bool = False, focus: tuple[int, int] | None = None,
                 extra: Sequence[Quad] = ()) -> tuple[NamedNode, tuple[Decided, ...], Outcome]:
        if not mentions:
            if require_concept:
                check_not_empty(self.store)  # an empty store says so, not "no known concept"
            write = False  # nothing to record
        if mentions and focus is not None and not focus_mentions([(m.start, m.end) for m in mentions], focus):
            s, e = focus
            raise InputError(f"the focus {s}:{e} ({q[s:e]!r}) is no word or phrase of the loaded "
                             "vocabularies (function words are not annotated): nothing to rank by")
        unit = Unit(0, len(q), lang, q, tuple(mentions))
        # no mention: nothing to decide, so no selector is needed (nor its configuration)
        selector = self.selector(wsd) if wsd is not WsdMode.NONE and mentions else None
        outcome = decide(self.store, [unit], selector)
        iri = record.question_iri(q, lang, wsd)
        if write:
            owner = Owner(iri, KGR.Question, iri.value.rsplit("/", 1)[-1], q, lang)
            write_text(self.store, self.write_lock, owner, [unit], outcome, extra)
        return iri, outcome.decided, outcome

    def annotate(self, text: str, lang: str | None = None,
                 wsd: WsdMode | str | None = None,
                 record_question: bool = True, scheme: str | None = None) -> list[MentionReport]:
        """Mentions of ``text`` with candidates and chosen senses (decisions are recorded unless
        ``record_question`` is false); ``scheme``: only candidates of that concept scheme or
        loaded source (IRI or name, :meth:`scheme_filter`)."""
        return self.annotate_text(text, lang, wsd, record_question, scheme)[1]

    def annotate_text(self, text: str, lang: str | None = None,
                      wsd: WsdMode | str | None = None, record_question: bool = True,
                      scheme: str | None = None) -> tuple[LanguageGuess, list[MentionReport]]:
        """:meth:`annotate`, with the language it took the text to be in (:meth:`language`),
        from one pass over the text."""
        mode = self.mode(wsd)
        q, guess, mentions = self._question(text, lang, self.scheme_filter(scheme))
        write = record_question and mode is not WsdMode.NONE
        iri, decided, _ = self._analyse(q, guess.lang, mentions, mode, write=write)
        return guess, [_report(d, iri if write and decided else None) for d in decided]

    def ask(self, question: str, lang: str | None = None, k: int = 10,
            wsd: WsdMode | str | None = None,
            focus: tuple[int, int] | str | None = None, expansion: dict[str, float] | None = None,
            exclude_ids: Iterable[str] = (), record_question: bool = True,
            scheme: str | None = None, min_score: float = 0.0) -> Answer:
        """Annotate the question, decide its senses, rank documents by the chosen concepts.

        A question none of whose words the store knows is no error: its answer has no results
        and says why (:attr:`Answer.reason`). Bad input (an empty question, a bad ``k``, a
        focus outside the question or on a word that is no mention) raises :class:`InputError`.

        ``focus`` — the word the question is about — is (start, end) character offsets into the
        question, or the word or phrase itself (``"הגבר"``, ``"made up"``; ``"bank#2"`` for its
        second occurrence; matched ignoring case, whole words first, then inside words, as in
        a Hebrew word with prefix letters). ``record_question``: write the question and its
        decisions (for ``explain``), else nothing. ``scheme``: only the readings of that
        concept scheme or loaded source (IRI or name), and only documents through its concepts.
        ``min_score``: leave out the documents whose relevance (:attr:`Result.relevance`, in
        [0, 1]) is below it; when that leaves none, :attr:`Answer.reason` says so.
        """
        t0 = time.perf_counter()
        if not isinstance(k, int) or k < 1 or k > 1000:
            raise InputError("k must be an integer between 1 and 1000")
        min_score = check_min_relevance(min_score)
        mode = self.mode(wsd)
        schemes = self.scheme_filter(scheme)
        q, guess, mentions = self._question(question, lang, schemes)
        code = guess.lang
        if isinstance(focus, str):
            focus = focus_span(q, focus)
        if focus is not None:
            s, e = focus
            if not (0 <= s < e <= len(q)):
                raise InputError(f"focus {s}:{e} is outside the question (0:{len(q)})")
        cfg = self.retrieval if expansion is None else self.retrieval.with_expansion(expansion)
        if mode is WsdMode.NONE:
            cfg = replace(cfg, match="label")
        retrieval = record.retrieval_quads(record.question_iri(q, code, mode), cfg, k, mode, focus)
        iri, decided, outcome = self._analyse(q, code, mentions, mode, write=record_question,
                                              require_concept=True, focus=focus,
                                              extra=retrieval)
        t1 = time.perf_counter()
        if not decided:  # an empty result, not an error: nothing to rank by, nothing recorded
            return Answer(question=q, question_iri="", lang=code, mentions=(), results=(), wsd=mode,
                          timings_ms={"analyse": (t1 - t0) * 1000}, language=guess, reason=NO_CONCEPT)
        readings = [mention_reading(d.mention, d.selection, d.decision.value if d.decision else None,
                                    mode is WsdMode.NONE) for d in decided]
        concepts = question_concepts(readings, focus)
        expanded = expand(self.store, concepts, cfg)
        if schemes is not None:  # expansion stays inside the scheme too
            from kg_rag.annotate import LexiconAnnotator

            annotator = self.annotator
            assert isinstance(annotator, LexiconAnnotator)  # _question checked it
            kept = schemes.concepts(annotator.schemes, [c.iri for c in expanded])
            expanded = [c for c in expanded if c.iri in kept]
        found = ranked(self.store, expanded, k, code, cfg, frozenset(exclude_ids), readings, focus,
                       min_score)
        results = found.results
        t2 = time.perf_counter()
        return Answer(
            question=q, question_iri=iri.value, lang=code,
            mentions=tuple(_report(d, iri if record_question else None) for d in decided), results=tuple(results), wsd=mode,
            llm_calls=outcome.llm_calls, tokens_in=outcome.tokens_in, tokens_out=outcome.tokens_out,
            timings_ms={"analyse": (t1 - t0) * 1000, "retrieve": (t2 - t1) * 1000},
            language=guess, reason="" if results else no_match(min_score, found.cut, found.best_cut),
        )

    def explain(self, iri: str, document: str | None = None) -> Explanation:
        """The explanation of a question, document, annotation or decision IRI; with
        ``document`` (a result's ``doc_iri``), of why that document answered the question.
        Both take the forms :meth:`resolve` reads (``<IRI>``, a short id)."""
        iri = self.resolve(iri)
        if document is not None:
            from kg_rag.explain.result import explain_result

            return explain_result(self.store, iri, self.resolve(document, kinds=("doc",)))
        return explain(self.store, iri)

    def resolve(self, ref: str, kinds: Sequence[str] = ("question", "decision", "ann", "doc")) -> str:
        """The IRI ``ref`` names: an IRI, an IRI in angle brackets as kg-rag prints them, or a
        short id it shows — a question's, decision's or annotation's hash, ``question/<hash>``,
        a document id — when exactly one of ``kinds`` of kg-rag's IRIs with it is in the store.
        NotFoundError when none is, InputError when several are."""
        r = ref.strip() if isinstance(ref, str) else ""
        if r.startswith("<") and r.endswith(">"):
            r = r[1:-1].strip()
        if not r or r.startswith(("http://", "https://", "urn:")):
            if r:
                try:
                    NamedNode(r)
                except ValueError:
                    raise InputError(f"{r[:200]!r} is not a valid IRI (a space or a character "
                                     f"an IRI cannot hold)") from None
            return r
        head, _, tail = r.partition("/")
        if tail and head in kinds:
            wanted = [str(ID) + (r if head != "doc" else "doc/" + urllib.parse.quote(tail, safe=""))]
        else:
            wanted = [record.doc_iri(r).value if k == "doc" else str(ID) + k + "/" + r for k in kinds
                      if k == "doc" or _HASH.fullmatch(r)]
        found = []
        for iri in wanted:
            try:
                explain(self.store, iri)
            except NotFoundError:
                continue
            found.append(iri)
        if len(found) > 1:
            raise InputError(f"{r!r} names several things in this store ({', '.join(found)}); "
                             "give the whole IRI")
        if not found:
            names = [_KIND_NAMES[k] for k in kinds]
            what = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
            raise NotFoundError(f"{r!r} is no IRI (http://, https:// or urn:) and no id of a "
                                f"{what} in this store")
        return found[0]

    def describe(self, iri: str) -> Explanation:
        """The explanation of a question, document, annotation or decision IRI; of any other
        resource in the store (a concept, a sense), what the store says about it (``summary``
        has its ``resource`` rows); NotFoundError when neither."""
        iri = self.resolve(iri)
        try:
            node = NamedNode(iri)
        except ValueError:
            raise InputError(f"{iri!r} is not a valid IRI") from None
        try:
            return self.explain(iri)
        except NotFoundError:
            triples = self.store.construct("construct-resource", bind={"root": node})
            if not triples:
                raise
        return Explanation(iri, tuple(triples), {"root": iri, "resource": [
            {"predicate": t.predicate.value, "object": str(getattr(t.object, "value", t.object)),
             "iri": isinstance(t.object, NamedNode),
             "lang": getattr(t.object, "language", None) or ""} for t in triples]})

    def labels(self, iris: Iterable[str], lang: str) -> dict[str, str]:
        """A display label per concept IRI, preferring ``lang``, then English, then any
        (concepts without a label are left out)."""
        from kg_rag.pipeline.retrieve import concept_labels

        return concept_labels(self.store, _iris(iris), lang)

    def glosses(self, iris: Iterable[str], lang: str, width: int = 90) -> dict[str, str]:
        """A short definition per concept (or sense-only reading) to tell readings apart,
        preferring ``lang``, then English, then any, cut to ``width`` characters at a word
        boundary (concepts without one are left out)."""
        from kg_rag.pipeline.retrieve import concept_glosses

        return concept_glosses(self.store, _iris(iris), lang, width)

    # --- the store as a whole ---------------------------------------------------------------
    def sources(self) -> list[dict[str, Any]]:
        """The loaded sources (the catalog): one record each, with ``stale`` true when it was
        loaded by an older mapping and should be reloaded."""
        from dataclasses import asdict

        from loaders import list_sources, stale

        return [{**asdict(r), "stale": stale(r)} for r in list_sources(self.store)]

    def source_graph(self, name: str) -> str:
        """The graph IRI of a loaded source named by its IRI (returned as given, known or not)
        or by its file name as :meth:`sources` lists it (NotFoundError if none, InputError if
        several or empty)."""
        from loaders import resolve_source

        try:
            NamedNode(name)
            return name
        except ValueError:
            return resolve_source(self.store, name, missing=NotFoundError).graph

    def drop_source(self, graph: str, reannotate: bool = False) -> dict[str, int]:
        """Remove a loaded source and its catalog record (NotFoundError if there is none).

        Returns the documents whose annotations named a concept or sense of the source (id →
        how many annotations): those now point at nothing until the documents are annotated
        again — ``reannotate`` does it right away, from their stored text, with what is still
        loaded (a warning is logged otherwise)."""
        from kg_rag.pipeline.reannotate import documents_of_source
        from loaders import drop_source

        graph = self.source_graph(graph)
        with self.write_lock:
            used = documents_of_source(self.store, graph)
            try:
                drop_source(self.store, graph)
            finally:
                self.invalidate()
        if used and reannotate:
            self.reannotate(used)
        elif used:
            log.warning("%d document(s) have %d annotation(s) naming concepts of <%s>, which "
                        "now point at nothing; annotate them again with what is loaded "
                        "(kg-rag drop-source --reannotate, KnowledgeGraph.reannotate): %s%s",
                        len(used), sum(used.values()), graph, ", ".join(list(used)[:10]),
                        ", …" if len(used) > 10 else "")
        return used

    def reannotate(self, doc_ids: Iterable[str], wsd: WsdMode | str | None = None,
                   progress: Callable[[int], None] | None = None) -> IndexReport:
        """Annotate the stored documents ``doc_ids`` again, from their stored text, with the
        vocabularies loaded now (after a source was dropped, loaded or aligned); NotFoundError
        before anything is written when one is not there."""
        from kg_rag.pipeline.reannotate import stored_documents

        return self.index_documents(stored_documents(self.store, doc_ids), wsd=wsd,
                                    progress=progress)

    # --- alignment (kg_rag.align) --------------------------------------------------------------
    def align(self, dictionary: str, thesaurus: str) -> AlignmentReport:
        """Propose links from the senses of the ``dictionary`` source to the concepts of the
        ``thesaurus`` source (names as :meth:`sources` lists them, or graph IRIs), recorded with
        their scores in the alignment graph (proposed: nothing reads them until accepted)."""
        from kg_rag.align import align

        with self.write_lock:
            return align(self.store, dictionary, thesaurus)

    def alignments(self, status: str | None = None) -> list[AlignmentLink]:
        """The alignment links (proposed, accepted, rejected, or those of ``status``)."""
        from kg_rag.align import list_links

        return list_links(self.store, status)

    def review_alignments(self, ids: Iterable[str] = (), status: str = "accepted",
                          above: float | None = None) -> list[AlignmentLink]:
        """Accept or reject links by id, or accept every proposed link scored ≥ ``above``;
        accepted links are read by annotation and selection from then on."""
        from kg_rag.align import accept_above, set_status

        with self.write_lock:
            try:
                if above is not None:
                    if status != "accepted":
                        raise InputError("only accepting takes a score threshold")
                    return accept_above(self.store, above)
                return set_status(self.store, ids, status)
            finally:
                self.invalidate()

    def stats(self, labels: bool = False) -> dict[str, Any]:
        """Triples per named graph, their sum and the number of documents; with ``labels``,
        also ``labels``: how many labels each graph has per language."""
        rows = self.store.select("select-named-graphs")
        graphs = {r["g"].value: int(r["n"].value) for r in rows}
        out: dict[str, Any] = {
            "graphs": graphs, "triples": sum(graphs.values()),
            "documents": sum(1 for g in graphs if g.startswith(record.doc_iri("").value))}
        if labels:
            out["labels"] = [{"graph": r["g"].value, "lang": r["lang"].value, "count": int(r["n"].value)}
                             for r in self.store.select("select-label-languages")]
        return out

    def raw_query(self, text: str, fmt: str = "json") -> tuple[bytes, str]:
        """Run a user's read query (the standard prefixes predeclared; an error's position
        counts from ``text``); the serialised answer and its media type."""
        return self.store.raw_query(text, fmt, predeclare=True)

    def update(self, text: str, base_iri: str | None = None) -> None:
        """Run a user's update that a guard has checked, then forget derived data. When it may
        have written a vocabulary graph (anything but document, question and decision graphs:
        :func:`kg_rag.store.update_targets.written_graphs`), the match keys of the graphs it
        wrote are recomputed and the catalog version moves (:mod:`loaders.edit`), so the
        annotator finds a label it added, not one it removed, and no cache of the old
        vocabularies is used again, here or in another process."""
        from kg_rag.store.update_targets import written_graphs
        from loaders.edit import after_edit, vocabulary_graphs

        targets = written_graphs(text, base_iri)
        with self.write_lock:
            try:
                self.store.user_update(text, base_iri)
                graphs = vocabulary_graphs(self.store, targets)
                if graphs is not None:
                    after_edit(self.store, graphs)
            finally:
                self.invalidate()


def _iris(iris: Iterable[str]) -> list[str]:
    """``iris`` as a list, each one an IRI (InputError naming the first that is not)."""
    if isinstance(iris, str):
        iris = [iris]
    out = list(iris)
    for i in out:
        try:
            NamedNode(i)
        except (ValueError, TypeError):
            raise InputError(f"{str(i)[:200]!r} is not a valid IRI") from None
    return out


def _paths(paths: str | Path | Iterable[str | Path]) -> list[str | Path]:
    """``paths`` as a list: one path given alone (a ``str`` or ``Path``) is one path — a string
    iterated would be its characters, ``/`` first, and walk the whole file system."""
    if isinstance(paths, (str, Path)):
        return [paths]
    try:
        out = list(paths)
    except TypeError:
        raise InputError(f"paths must be a path or a list of paths, not {type(paths).__name__}") from None
    for p in out:
        if not isinstance(p, (str, Path)):
            raise InputError(f"paths must be file or folder names, not {type(p).__name__}")
    return out


def _report(d: Decided, owner: NamedNode | None) -> MentionReport:
    """The report of one mention; ``owner`` is the question whose graph holds its annotation
    (None when nothing was written)."""
    return MentionReport(
        mention=d.mention, selection=d.selection,
        decision=d.decision.value if d.decision is not None else None,
        annotation=record.annotation_iri(owner, d.mention).value if owner is not None else None,
        reused=d.reused,
    )
