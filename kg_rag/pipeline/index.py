"""Index documents: passages, language, annotations and decisions — one update per document.

A document's graph is replaced as a whole together with the new decisions it needs, in ONE
update: re-indexing is idempotent, and a process killed mid-way leaves either the old document
or the new one, never an annotation without its decision.
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


def build_document(store: Store, doc: SourceDocument, annotator: Annotator,
                   selector: SenseSelector | None) -> tuple[Change, Outcome, dict[str, int], int]:
    passages = passages_of(doc)
    if not passages:
        raise InputError(f"document {doc.id!r} has no text")
    langs: dict[str, int] = {}
    for _, _, lang in passages:
        langs[lang] = langs.get(lang, 0) + 1
    main_lang = max(langs, key=lambda k: langs[k])
    units = [Unit(s, e, lang, doc.text[s:e], tuple(shift(annotator.annotate(doc.text[s:e], lang), s)))
             for s, e, lang in passages]
    outcome = decide(store, units, selector)
    owner = Owner(record.doc_iri(doc.id), KGR.Document, doc.id, doc.text, main_lang, doc.title,
                  doc.source)
    return text_change(owner, units, outcome), outcome, langs, len(passages)


def index_documents(store: Store, docs: Sequence[SourceDocument], annotator: Annotator,
                    selector: SenseSelector | None,
                    progress: Callable[[int], None] | None = None) -> IndexReport:
    t0 = time.perf_counter()
    # validate every document before writing any (bad input writes nothing)
    for d in docs:
        if not d.text.strip():
            raise InputError(f"document {d.id!r} is empty")
        if d.lang:
            check_language(d.lang)
    totals = {"passages": 0, "mentions": 0, "ambiguous": 0, "decided": 0, "reused": 0, "llm": 0}
    languages: dict[str, int] = {}
    for d in docs:
        change, outcome, langs, n_pass = build_document(store, d, annotator, selector)
        store.apply(change)
        totals["passages"] += n_pass
        totals["mentions"] += len(outcome.decided)
        totals["ambiguous"] += sum(1 for x in outcome.decided if x.mention.ambiguous)
        totals["decided"] += sum(1 for x in outcome.decided if x.selection is not None and not x.reused)
        totals["reused"] += sum(1 for x in outcome.decided if x.reused)
        totals["llm"] += outcome.llm_calls
        for k, v in langs.items():
            languages[k] = languages.get(k, 0) + v
        if progress:
            progress(1)
    return IndexReport(len(docs), totals["passages"], totals["mentions"], totals["ambiguous"],
                       totals["decided"], totals["reused"], languages,
                       time.perf_counter() - t0, totals["llm"])
