"""Index documents: passages, language, annotations and decisions.

A document's graph is replaced as a whole together with the new decisions it needs, in one
update — with up to :data:`WRITE_BATCH` other documents: re-indexing is idempotent, and a process
killed mid-way leaves each document either as it was or as it is now, never an annotation
without its decision.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from kg_rag.annotate import Annotator
from kg_rag.documents import SourceDocument, iter_paragraphs
from kg_rag.errors import InputError
from kg_rag.model import Mention
from kg_rag.namespaces import KGR
from kg_rag.pipeline import record
from kg_rag.pipeline.decide import Outcome, Unit, decide
from kg_rag.pipeline.write import Owner, text_change
from kg_rag.senses.base import SenseSelector
from kg_rag.store import Change, Store
from kg_rag.text.langid import check_language, detect

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexReport:
    documents: int
    passages: int
    mentions: int
    ambiguous: int
    decided: int
    reused: int
    languages: dict[str, int]
    seconds: float
    llm_calls: int = 0
    #: files of the given folders that were not documents, each with its one-line reason
    skipped: list[str] = field(default_factory=list)
    #: ids of documents indexed earlier from the same folders or files that this run did not
    #: read (their files are gone, or records left a JSON Lines file): still in the store unless
    #: ``pruned``
    gone: list[str] = field(default_factory=list)
    pruned: bool = False


def shift(mentions: Sequence[Mention], offset: int) -> list[Mention]:
    return [replace(m, start=m.start + offset, end=m.end + offset) for m in mentions]


def passages_of(doc: SourceDocument) -> list[tuple[int, int, str]]:
    """(start, end, lang) per paragraph; the language is given, or detected per paragraph."""
    doc_lang = check_language(doc.lang) if doc.lang else None
    out = []
    for s, e in iter_paragraphs(doc.text):
        lang = doc_lang or detect(doc.text[s:e], default="en")
        out.append((s, e, lang))
    return out


#: ``detail(doc_id, stage, done, total)``: progress within one document — ``annotate`` after
#: each passage (characters done of the document's), ``decide`` before and after its mentions
#: are decided (mentions to decide)
Detail = Callable[[str, str, int, int], None]


def document_units(doc: SourceDocument, annotator: Annotator,
                   detail: Detail | None = None) -> tuple[list[Unit], dict[str, int]]:
    """The annotated passages of ``doc`` and how many passages each language has."""
    passages = passages_of(doc)
    if not passages:
        raise InputError(f"document {doc.id!r} has no text")
    langs: dict[str, int] = {}
    for _, _, lang in passages:
        langs[lang] = langs.get(lang, 0) + 1
    units = []
    for s, e, lang in passages:
        units.append(Unit(s, e, lang, doc.text[s:e],
                          tuple(shift(annotator.annotate(doc.text[s:e], lang), s))))
        if detail is not None:
            detail(doc.id, "annotate", e, len(doc.text))
    return units, langs


def document_change(store: Store, doc: SourceDocument, units: Sequence[Unit], langs: dict[str, int],
                    selector: SenseSelector | None,
                    detail: Detail | None = None) -> tuple[Change, Outcome]:
    """Decide the mentions of ``doc``'s units; the ONE change that writes the document."""
    main_lang = max(langs, key=lambda k: langs[k])
    ambiguous = sum(1 for u in units for m in u.mentions if m.ambiguous)
    if detail is not None:
        detail(doc.id, "decide", 0, ambiguous)
    outcome = decide(store, units, selector)
    if detail is not None:
        detail(doc.id, "decide", ambiguous, ambiguous)
    owner = Owner(record.doc_iri(doc.id), KGR.Document, doc.id, doc.text, main_lang, doc.title,
                  doc.source, doc.root)
    return text_change(owner, units, outcome), outcome


def build_document(store: Store, doc: SourceDocument, annotator: Annotator,
                   selector: SenseSelector | None) -> tuple[Change, Tally, set[str]]:
    """``doc`` annotated and decided: its change, its figures and its passages' context hashes
    (:func:`contexts_of`); what a worker of :mod:`kg_rag.pipeline.parallel` sends back."""
    units, langs = document_units(doc, annotator)
    change, outcome = document_change(store, doc, units, langs, selector)
    return change, Tally.of(outcome, langs, len(units)), contexts_of(units)


#: documents written in one update (each document stays whole: a crash leaves a document either
#: as it was or as it is now, and never an annotation without its decision)
WRITE_BATCH = 32
#: quads above which the pending documents are written at once, whatever their number
WRITE_BATCH_QUADS = 50_000


class Writer:
    """Pending document changes, written as ONE update when enough have gathered. A document
    whose passage repeats a pending one's text is decided only after they are written, so that
    it reuses their decisions as it would one update at a time (a decision's IRI hashes its
    context)."""

    def __init__(self, store: Store, progress: Callable[[int], None] | None) -> None:
        self.store = store
        self.progress = progress
        self.changes: list[Change] = []
        self.ids: set[str] = set()
        self.contexts: set[str] = set()
        self.quads = 0

    def conflicts(self, doc: SourceDocument, contexts: set[str]) -> bool:
        """Would ``doc`` (its passages' context hashes) have to see the pending changes written
        first — the same document again, or a passage whose decision one of them makes?"""
        return doc.id in self.ids or not self.contexts.isdisjoint(contexts)

    def add(self, doc: SourceDocument, contexts: set[str], change: Change) -> None:
        self.changes.append(change)
        self.ids.add(doc.id)
        self.contexts.update(contexts)
        self.quads += len(change.insert) + len(change.delete)
        if len(self.changes) >= WRITE_BATCH or self.quads >= WRITE_BATCH_QUADS:
            self.flush()

    def flush(self) -> None:
        if not self.changes:
            return
        merged = Change()
        for c in self.changes:  # each change drops only its own document's graph
            merged.drop_graphs += c.drop_graphs
            merged.delete += c.delete
            merged.insert += c.insert
        self.store.apply(merged)
        if self.progress:
            for _ in self.changes:
                self.progress(1)
        self.changes, self.ids, self.contexts, self.quads = [], set(), set(), 0


def contexts_of(units: Sequence[Unit]) -> set[str]:
    """The context hashes of the passages whose decisions ``units`` need."""
    return {record.context_hash(u.context, u.lang) for u in units if any(m.ambiguous for m in u.mentions)}


@dataclass(slots=True)
class Tally:
    """What an index run counts, document by document (:class:`IndexReport`'s figures)."""

    passages: int = 0
    mentions: int = 0
    ambiguous: int = 0
    decided: int = 0
    reused: int = 0
    llm: int = 0
    languages: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, outcome: Outcome, langs: dict[str, int], passages: int) -> Tally:
        d = outcome.decided
        return cls(passages, len(d), sum(1 for x in d if x.mention.ambiguous),
                   sum(1 for x in d if x.selection is not None and not x.reused),
                   sum(1 for x in d if x.reused), outcome.llm_calls, dict(langs))

    def add(self, other: Tally) -> None:
        self.passages += other.passages
        self.mentions += other.mentions
        self.ambiguous += other.ambiguous
        self.decided += other.decided
        self.reused += other.reused
        self.llm += other.llm
        for k, v in other.languages.items():
            self.languages[k] = self.languages.get(k, 0) + v

    def report(self, documents: int, seconds: float) -> IndexReport:
        return IndexReport(documents, self.passages, self.mentions, self.ambiguous, self.decided,
                           self.reused, self.languages, seconds, self.llm)


def check_documents(docs: Sequence[SourceDocument]) -> None:
    """Every document valid before any is written (bad input writes nothing)."""
    for d in docs:
        if not d.text.strip():
            raise InputError(f"document {d.id!r} is empty")
        if d.lang:
            check_language(d.lang)


def index_documents(store: Store, docs: Sequence[SourceDocument], annotator: Annotator,
                    selector: SenseSelector | None,
                    progress: Callable[[int], None] | None = None,
                    detail: Detail | None = None) -> IndexReport:
    """Index ``docs``: annotated and decided one document at a time (a document's mentions in one
    selector call) and written :data:`WRITE_BATCH` documents per update; ``progress(1)`` once a
    document is written, ``detail`` (:data:`Detail`) within each document. (Fetching the concept evidence of 32 documents ahead in one go was
    measured and dropped: no gain on a first index, twice the CPU on a re-index, whose
    decisions are all reused and need no evidence.) :mod:`kg_rag.pipeline.parallel` does the
    same with several processes."""
    t0 = time.perf_counter()
    check_documents(docs)
    tally = Tally()
    writer = Writer(store, progress)
    for d in docs:
        units, langs = document_units(d, annotator, detail)
        contexts = contexts_of(units)
        if writer.conflicts(d, contexts):
            writer.flush()
        change, outcome = document_change(store, d, units, langs, selector, detail)
        writer.add(d, contexts, change)
        tally.add(Tally.of(outcome, langs, len(units)))
    writer.flush()
    return tally.report(len(docs), time.perf_counter() - t0)

