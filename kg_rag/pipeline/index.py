"""Index documents: passages, language, annotations and decisions.

A document's graph is replaced as a whole together with the new decisions it needs, in one
update — with up to :data:`WRITE_BATCH` other documents: re-indexing is idempotent, and a process
killed mid-way leaves each document either as it was or as it is now, never an annotation
without its decision.

A long document — more than :data:`SECTION_CHARS` characters — is annotated, decided and
written in **sections** of consecutive passages (:func:`sections_of`), one section at a time,
so that the memory of indexing it does not grow with its length (the selector's state per
mention and the quads built for it are a section's, not the document's). What changes for it:

* one sense per discourse (the knowledge selector pools the mentions of one ``select`` batch)
  pools over a section, not the whole document; a passage repeated in a later section reuses
  the decision made in the earlier one, as a passage repeated in a later document does;
* its old graph is dropped first; the sections are written two updates each (the section's new
  decisions, then its passages, annotations and postings), and the quads that
  list it as a document (type, identifier, text: :func:`~.write.owner_quads`) come with the last
  one — so ``documents`` and progress name it only once it is complete, while a reader of the
  store may meet its passages and annotations while it is written;
* if a section fails (an error, an interrupt) the document's graph and the decisions made for it
  that nothing else uses are removed: the store is as it was before, but for an earlier version of
  the same document, which is gone (the first step dropped it). A killed process (no chance to
  clean up) leaves the sections written so far, which the next indexing of it drops.
"""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from pyoxigraph import NamedNode

from kg_rag.annotate import Annotator
from kg_rag.cache import give_back
from kg_rag.documents import SourceDocument, iter_paragraphs
from kg_rag.errors import InputError
from kg_rag.model import Mention
from kg_rag.namespaces import KGR
from kg_rag.pipeline import record
from kg_rag.pipeline.decide import Outcome, Unit, decide
from kg_rag.pipeline.write import Owner, body_quads, owner_quads, text_change
from kg_rag.senses.base import SenseSelector
from kg_rag.store import Change, Store, Values
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


Passage = tuple[int, int, str]


def languages(passages: Sequence[Passage]) -> dict[str, int]:
    """How many passages each language has."""
    langs: dict[str, int] = {}
    for _, _, lang in passages:
        langs[lang] = langs.get(lang, 0) + 1
    return langs


def annotated(doc: SourceDocument, passages: Sequence[Passage], annotator: Annotator,
              detail: Detail | None = None) -> list[Unit]:
    """``passages`` of ``doc`` annotated, one unit each."""
    units = []
    for s, e, lang in passages:
        units.append(Unit(s, e, lang, doc.text[s:e],
                          tuple(shift(annotator.annotate(doc.text[s:e], lang), s))))
        if detail is not None:
            detail(doc.id, "annotate", e, len(doc.text))
    return units


def document_units(doc: SourceDocument, annotator: Annotator, detail: Detail | None = None,
                   passages: Sequence[Passage] | None = None) -> tuple[list[Unit], dict[str, int]]:
    """The annotated passages of ``doc`` (``passages``: :func:`passages_of`, when already
    known) and how many passages each language has."""
    passages = passages_of(doc) if passages is None else passages
    if not passages:
        raise InputError(f"document {doc.id!r} has no text")
    return annotated(doc, passages, annotator, detail), languages(passages)


#: characters of a section of a long document (module doc): a document of at most this many
#: characters is decided as one batch and written in one update, as before sections existed.
#: Indexing holds a section whole: the selector's per-request state of its mentions (~40 kB a
#: mention), its quads (~250 bytes a quad, ~7 quads a character of English text with OEWN) and
#: the engine's write of a part of it (:data:`SECTION_PART`). Measured on the first
#: 100 kB of a text of OEWN definitions, into an OEWN store (peak RSS, bench/ANALYSIS.md, issue
#: 17 sixth pass): sections of 50,000 characters 1,037 MB, of 20,000 896 MB (writes in parts of
#: 100,000 quads), of 20,000 written in parts of :data:`SECTION_PART` ~775 MB (the whole document
#: 1,214 MB); a 1 MB text 934 MB (was over 5 GB). 20,000 characters is ~8 pages, ~3,300 words:
#: long enough that one sense per discourse still sees a word's repeated uses.
SECTION_CHARS = 20_000
#: quads per part of a section's write (measured when a part was a transaction, held in memory
#: at ~1.6 kB a quad; the bulk loader now writes it, the 100 kB text peaking at 755 MB, seventh
#: pass): a 20,000-character section is ~145,000 quads
SECTION_PART = 25_000


def sections_of(passages: Sequence[Passage], limit: int) -> list[list[Passage]]:
    """``passages`` in runs of consecutive passages, each spanning at most ``limit`` characters
    (from its first passage's start to its last one's end) — but for a passage longer than
    that, which is a section by itself. A document of at most ``limit`` characters is one."""
    out: list[list[Passage]] = []
    cur: list[Passage] = []
    for p in passages:
        if cur and p[1] - cur[0][0] > limit:
            out.append(cur)
            cur = []
        cur.append(p)
    if cur:
        out.append(cur)
    return out


def document_sections(doc: SourceDocument, limit: int | None = None) -> list[list[Passage]]:
    """The sections of ``doc`` (:func:`sections_of`; ``limit`` None: :data:`SECTION_CHARS`)."""
    passages = passages_of(doc)
    if not passages:
        raise InputError(f"document {doc.id!r} has no text")
    return sections_of(passages, SECTION_CHARS if limit is None else limit)


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
                   selector: SenseSelector | None,
                   passages: Sequence[Passage] | None = None) -> tuple[Change, Tally, set[str]]:
    """``doc`` annotated and decided: its change, its figures and its passages' context hashes
    (:func:`contexts_of`); what a worker of :mod:`kg_rag.pipeline.parallel` sends back."""
    units, langs = document_units(doc, annotator, passages=passages)
    change, outcome = document_change(store, doc, units, langs, selector)
    return change, Tally.of(outcome, langs, len(units)), contexts_of(units)


def index_in_sections(store: Store, doc: SourceDocument, sections: Sequence[Sequence[Passage]],
                      annotator: Annotator, selector: SenseSelector | None,
                      detail: Detail | None = None) -> tuple[Tally, set[str]]:
    """Index the long document ``doc`` one section at a time (module doc): its old graph
    dropped, then one update per section, the quads that list it with the last; on any failure
    its graph and the new decisions written for it are removed. Returns its figures and its
    passages' context hashes. ``detail``: ``annotate`` per passage as for any document,
    ``decide`` before each section that has ambiguous mentions (those decided so far, and with
    this section's: done < total) and once all are decided (done == total)."""
    all_passages = [p for sec in sections for p in sec]
    langs = languages(all_passages)
    main_lang = max(langs, key=lambda k: langs[k])
    owner = Owner(record.doc_iri(doc.id), KGR.Document, doc.id, doc.text, main_lang, doc.title,
                  doc.source, doc.root)
    tally = Tally(languages=dict(langs))
    contexts: set[str] = set()
    new: list[NamedNode] = []       # the decisions written for it (removed if a section fails)
    done = first = 0
    log.info("indexing document %r (%d characters) in %d sections", doc.id, len(doc.text),
             len(sections))
    store.drop_graph(owner.iri)     # the old version, if any: the sections only add
    try:
        for k, sec in enumerate(sections):
            units = annotated(doc, sec, annotator, detail)
            ambiguous = sum(1 for u in units for m in u.mentions if m.ambiguous)
            if detail is not None and (ambiguous or k == 0):
                detail(doc.id, "decide", done, done + ambiguous)
            outcome = decide(store, units, selector)
            done += ambiguous
            # the section's decisions first, then its text's quads: two writes, so the two sets
            # of quads (~500 bytes a quad; a decision is ~66 quads) are never held together
            # while the posting index merges the document's segments at the last section
            store.apply(Change(insert=list(outcome.decision_quads), part=SECTION_PART,
                               nested=record.CANDIDATE))
            new += [d.decision for d in outcome.decided
                    if d.decision is not None and d.selection is not None and not d.reused]
            outcome = replace(outcome, decision_quads=())
            quads = body_quads(owner, units, outcome, first)
            if k == len(sections) - 1:
                quads = owner_quads(owner) + quads
            store.apply(Change(insert=quads, part=SECTION_PART))
            tally.add(Tally.of(outcome, {}, len(units)))
            contexts |= contexts_of(units)
            first += len(units)
            del quads, units, outcome   # not held while the next section is decided
            give_back()
    except BaseException:
        log.warning("indexing document %r failed after %d of its %d passages: removing what was "
                    "written for it", doc.id, first, len(all_passages))
        remove_document(store, owner.iri, new)
        raise
    if detail is not None:
        detail(doc.id, "decide", done, done)
    return tally, contexts


def remove_document(store: Store, iri: NamedNode, decisions: Sequence[NamedNode]) -> None:
    """Drop the graph ``iri`` and those of ``decisions`` that no annotation uses (what a failed
    sectioned write of a document had written); errors are logged (the caller raises its own)."""
    try:
        store.drop_graph(iri)
        unique = sorted(set(decisions), key=lambda n: n.value)
        for i in range(0, len(unique), REMOVE_BATCH):
            store.run_update("delete-unused-decisions",
                             values=Values.column("decision", unique[i : i + REMOVE_BATCH]))
    except Exception as e:  # noqa: BLE001 - the section's own error is what the caller raises
        # one line: the error the caller raises is what to report (a traceback here would
        # print before it, even with -q)
        log.error("could not remove the partly written document %s (%s): index it again or "
                  "delete it", iri.value, str(e).splitlines()[0] if str(e) else type(e).__name__)


#: decisions per update when a failed sectioned write removes the ones it made
REMOVE_BATCH = 2_000


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
        # each change drops only its own document's graph; a nesting all of them declare holds
        nested = {c.nested for c in self.changes}
        merged = Change(nested=nested.pop() if len(nested) == 1 else "")
        for c in self.changes:
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


#: bidi controls (marks, embeddings, overrides, isolates) a document id may not hold
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                           "\u2066\u2067\u2068\u2069")


def id_problem(doc_id: str) -> str | None:
    """Why ``doc_id`` cannot name a document (None: it can): a control character (Unicode
    category Cc: a newline or tab would forge rows and columns of the plain-text listings) or a
    bidi control (it would reorder what is printed around it)."""
    for c in doc_id:
        if unicodedata.category(c) in ("Cc", "Zl", "Zp"):   # Zl/Zp: U+2028/U+2029 end lines too
            return f"the control character U+{ord(c):04X}"
        if c in _BIDI_CONTROLS:
            return f"the bidi control U+{ord(c):04X}"
    return None


def check_documents(docs: Sequence[SourceDocument]) -> None:
    """Every document valid before any is written (bad input writes nothing)."""
    for d in docs:
        problem = id_problem(d.id)
        if problem is not None:
            where = f"{d.source}: " if d.source else ""
            raise InputError(f"{where}the document id {d.id!r} holds {problem}; an id may hold no "
                             f"control or bidi characters")
        if not d.text.strip():
            raise InputError(f"document {d.id!r} is empty")
        if d.lang:
            check_language(d.lang)


def index_documents(store: Store, docs: Sequence[SourceDocument], annotator: Annotator,
                    selector: SenseSelector | None,
                    progress: Callable[[int], None] | None = None,
                    detail: Detail | None = None,
                    section_chars: int | None = None) -> IndexReport:
    """Index ``docs``: annotated and decided one document at a time (a document's mentions in one
    selector call) and written :data:`WRITE_BATCH` documents per update — a document longer than
    ``section_chars`` (None: :data:`SECTION_CHARS`) in sections (:func:`index_in_sections`);
    ``progress(1)`` once a document is written (all of it), ``detail`` (:data:`Detail`) within
    each document. (Fetching the concept evidence of 32 documents ahead in one go was
    measured and dropped: no gain on a first index, twice the CPU on a re-index, whose
    decisions are all reused and need no evidence. So was looking up the readings of 16
    documents' passages in one query: 1.31 instead of 1.00 ms an owner on the bench's 400
    documents.) :mod:`kg_rag.pipeline.parallel` does the same with several processes."""
    t0 = time.perf_counter()
    check_documents(docs)
    tally = Tally()
    writer = Writer(store, progress)
    for d in docs:
        sections = document_sections(d, section_chars)
        if len(sections) > 1:
            writer.flush()   # it is decided against what came before it, as one more update
            counts, _ = index_in_sections(store, d, sections, annotator, selector, detail)
            tally.add(counts)
            if progress is not None:
                progress(1)
            continue
        units, langs = document_units(d, annotator, detail, sections[0])
        contexts = contexts_of(units)
        if writer.conflicts(d, contexts):
            writer.flush()
        change, outcome = document_change(store, d, units, langs, selector, detail)
        writer.add(d, contexts, change)
        tally.add(Tally.of(outcome, langs, len(units)))
    writer.flush()
    return tally.report(len(docs), time.perf_counter() - t0)

