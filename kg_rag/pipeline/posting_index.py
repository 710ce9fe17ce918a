"""The ranking's postings as arrays on disk, kept current with the store's document writes.

Ranking reads, for every query concept, every document's posting of it (:mod:`.postings`), and
for the documents it shows, where their annotations of the matched concepts are. Through SPARQL
that is ~30 µs a row — at 10,000 documents ~8,600 rows, a quarter of a second, a question
(bench/ANALYSIS.md). This index holds the same facts as numpy arrays.

**What it holds.** Exactly what the store's document graphs say, at one documents stamp
(:mod:`kg_rag.store.stamp`): ``manifest.json`` names the stamp and the *segments*, each a folder
of arrays — the posting nodes (document, node, label count, agreement sum, meaning probability;
sorted by concept, then document), the annotations' spans (document, candidate concept,
annotation, mention and passage offsets; by document) — and the documents the write it comes
from *retires* (their postings in earlier segments no longer count: dropped or rewritten),
*drops* (their spans and their being a document no longer count) and *types* (``a
kgr:Document``: the number of documents). Segments never change once written; the manifest is
replaced whole (written aside, renamed) under a lock. The folder is named by the store's
identity, so a copy of the store folder finds it.

**When it is used.** :func:`arrays` and :func:`spans` answer only when the manifest's stamp is
the store's finished stamp (:func:`current`); else None, and the caller reads the store as
before — so the answers are the same either way, and an out-of-date index costs speed, never
correctness.

**How it is kept.** The store tells :func:`follow`'s follower of every write of a document graph
(:meth:`~kg_rag.store.base.Store.follow_documents`): when the index was current at the stamp
before the write, the write's quads become a new segment, merged into the one before while that
one is at most :data:`MERGE_RATIO` times larger and the two hold at most :data:`MAX_MERGED` rows
(so a store keeps O(log n) segments up to that size, and a few of that size beyond it), and the
manifest moves to the write's stamp. Anything else — a user's SPARQL update, a write by a
process that does not follow, a failed write, two writers racing, a write that deletes some
annotation quads — leaves the index at an old stamp: :func:`refresh` (at the start and end of an
index run, ``kg-rag postings --rebuild``) rebuilds it from the store, never while a write is
under way, and until then ranking reads the store.

In-memory stores keep no index (nothing to keep it beside).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pyoxigraph import Quad

from kg_rag.derived import STALE_DAYS, Derived
from kg_rag.namespaces import KGR, OA, RDF
from kg_rag.store import Change, Store, Values, stamp

log = logging.getLogger(__name__)

#: the layout of the files; another layout is not read (and is rebuilt)
FORMAT = 4
#: a segment is merged into the one before it when that one has at most this many times its entries
MERGE_RATIO = 4
#: ... and when the two hold at most this many rows (postings + spans) together: a merge holds
#: both in memory, ~100 bytes a row at its peak, so an unbounded one grows with the corpus (the
#: last merge of a 100,000-document run, 24 M rows, took the run from 1.7 to 4.0 GB; bench/
#: ANALYSIS.md). Larger stores keep a few segments of about this size; a query reads each.
MAX_MERGED = 4_000_000
#: documents per query when the index is built from the store
BATCH = 500

_PREDICATES = {KGR.postingConcept.value: 0, KGR.labelCount.value: 1,
               KGR.agreementSum.value: 2, KGR.meaningProbability.value: 3}
_ARRAYS = ("doc", "node", "labels", "agreement", "meaning", "offsets",
           "s_doc", "s_concept", "s_ann", "s_pos", "s_offsets")
#: a row's number in a segment's concept or document table, in memory (the files hold uint32):
#: half the width of int64 in the merges, whose copies of a long document's rows are the peak
#: of indexing it (bench/ANALYSIS.md)
_NUM = np.int32
#: an annotation's four character offsets (start, end, passage start, passage end), in memory
#: and in the files: a text of up to 4 G characters
_POS = np.uint32


#: a concept's postings as :func:`arrays` gives them: (document number, labels, agreement,
#: meaning), one entry per posting node
Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _positions(rows: Sequence[tuple[int, int, int, int]]) -> np.ndarray:
    """Spans' offsets as an (n, 4) array; an offset beyond what :data:`_POS` holds is an
    error, never a wrapped number."""
    a = np.asarray(rows, np.int64).reshape(len(rows), 4)
    if len(a) and (a.min() < 0 or a.max() > np.iinfo(_POS).max):
        raise ValueError("an annotation offset out of the posting index's range")
    return a.astype(_POS)


# --- one segment ---------------------------------------------------------------------------

@dataclass(slots=True)
class Entries:
    """Postings as parallel lists (one element per posting node), as a write or the store gives
    them; ``typed`` the documents whose ``a kgr:Document`` the write adds."""

    concept: list[str] = field(default_factory=list)
    doc: list[str] = field(default_factory=list)
    node: list[int] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    agreement: list[float] = field(default_factory=list)
    meaning: list[float] = field(default_factory=list)
    typed: set[str] = field(default_factory=set)
    #: documents whose graph the write drops (or whose ``a kgr:Document`` it deletes)
    dropped: set[str] = field(default_factory=set)
    #: documents whose earlier postings the write removes (dropped, or posting quads deleted)
    retires: set[str] = field(default_factory=set)
    #: where the documents' annotations are: one row per annotation and candidate concept —
    #: (document, concept, annotation, (start, end, passage start, passage end))
    spans: list[tuple[str, str, int, tuple[int, int, int, int]]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Block:
    """A segment's contents in memory: entries numbered against its own concept and document
    tables (sorted IRIs); the documents whose entries in earlier segments it retires; those it
    adds as ``kgr:Document`` and those whose graph it drops (for the number of documents)."""

    concepts: list[str]
    docs: list[str]
    concept: np.ndarray     # per entry, into ``concepts``
    doc: np.ndarray         # per entry, into ``docs``
    node: np.ndarray
    labels: np.ndarray
    agreement: np.ndarray
    meaning: np.ndarray
    retires: frozenset[str]
    typed: frozenset[str]
    dropped: frozenset[str]
    # the annotations' spans (rows: document, concept, annotation number, 4 offsets)
    s_doc: np.ndarray
    s_concept: np.ndarray
    s_ann: np.ndarray
    s_pos: np.ndarray

    @classmethod
    def of(cls, e: Entries) -> Block:
        concepts = sorted(set(e.concept) | {r[1] for r in e.spans})
        docs = sorted(set(e.doc) | {r[0] for r in e.spans})
        c_no, d_no = {c: i for i, c in enumerate(concepts)}, {d: i for i, d in enumerate(docs)}
        n, m = len(e.doc), len(e.spans)
        return cls(concepts, docs,
                   np.fromiter((c_no[c] for c in e.concept), _NUM, n),
                   np.fromiter((d_no[d] for d in e.doc), _NUM, n),
                   np.asarray(e.node, np.uint64), np.asarray(e.labels, np.int64),
                   np.asarray(e.agreement, np.float64), np.asarray(e.meaning, np.float64),
                   frozenset(e.retires), frozenset(e.typed), frozenset(e.dropped),
                   np.fromiter((d_no[r[0]] for r in e.spans), _NUM, m),
                   np.fromiter((c_no[r[1]] for r in e.spans), _NUM, m),
                   np.asarray([r[2] for r in e.spans], np.uint64),
                   _positions([r[3] for r in e.spans]))

    def __len__(self) -> int:   # rows, as a segment counts them: postings and spans
        return len(self.doc) + len(self.s_doc)


def _renumber(table: list[str], merged: list[str]) -> np.ndarray:
    where = {x: i for i, x in enumerate(merged)}
    return np.fromiter((where[x] for x in table), _NUM, len(table))


def _firsts(*keys: np.ndarray) -> np.ndarray | None:
    """The positions, in order, of the first row of each distinct key (``keys``: its columns);
    None when no key repeats. A stable sort of the columns, not ``np.unique`` over a stacked
    copy of them: the last merge of a long document's segments holds millions of rows, and
    unique's copies were the peak of indexing a 1 MB text (bench/ANALYSIS.md)."""
    n = len(keys[0])
    if n < 2:
        return None
    order = np.lexsort(keys[::-1])   # by the first column, then the next…; equal keys in row order
    repeat = np.ones(n - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        repeat &= ks[1:] == ks[:-1]
        del ks
    if not repeat.any():
        return None
    keep = np.ones(n, dtype=bool)
    keep[1:] = ~repeat
    return np.sort(order[keep])


def _merge(old: Block, new: Block, keep_retires: bool) -> Block:
    """Two consecutive segments as one: ``old``'s entries of the documents ``new`` retires
    dropped, the same node written twice kept once (the newer); the retirements of both kept
    for the segments before them unless ``keep_retires`` is false (there are none)."""
    concepts = sorted(set(old.concepts) | set(new.concepts))
    docs = sorted(set(old.docs) | set(new.docs))
    om, nm = _renumber(old.docs, docs), _renumber(old.concepts, concepts)
    keep = ~np.isin(old.doc, np.asarray([i for i, d in enumerate(old.docs) if d in new.retires], _NUM))
    cols = [np.concatenate([a, b]) for a, b in (
        (_renumber(new.concepts, concepts)[new.concept], nm[old.concept[keep]]),
        (_renumber(new.docs, docs)[new.doc], om[old.doc[keep]]),
        (new.node, old.node[keep]), (new.labels, old.labels[keep]),
        (new.agreement, old.agreement[keep]), (new.meaning, old.meaning[keep]))]
    # one entry per (document, node), the newer first in ``cols``
    first = _firsts(cols[1], cols[2])
    if first is not None:
        for i in range(len(cols)):   # one column at a time: a long document's rows are millions
            cols[i] = cols[i][first]
    typed = (old.typed - new.dropped) | new.typed
    c, d, node, labels, agreement, meaning = cols
    # the spans: those of the documents ``new`` drops are gone; one row per (document,
    # annotation, concept), the newer first
    skeep = ~np.isin(old.s_doc, np.asarray([i for i, x in enumerate(old.docs) if x in new.dropped], _NUM))
    sd = np.concatenate([_renumber(new.docs, docs)[new.s_doc], om[old.s_doc[skeep]]])
    sc = np.concatenate([_renumber(new.concepts, concepts)[new.s_concept], nm[old.s_concept[skeep]]])
    sa = np.concatenate([new.s_ann, old.s_ann[skeep]])
    sp = np.concatenate([new.s_pos, old.s_pos[skeep]]).reshape(-1, 4)
    sfirst = _firsts(sd, sc, sa)
    if sfirst is not None:
        sd = sd[sfirst]
        sc = sc[sfirst]
        sa = sa[sfirst]
        sp = sp[sfirst]
    if keep_retires:
        return Block(concepts, docs, c, d, node, labels, agreement, meaning,
                     old.retires | new.retires, typed, old.dropped | new.dropped, sd, sc, sa, sp)
    return Block(concepts, docs, c, d, node, labels, agreement, meaning, frozenset(), typed,
                 frozenset(), sd, sc, sa, sp)


def _write_segment(folder: Path, b: Block) -> None:
    """A segment folder — entries sorted by concept, then document — written aside and renamed,
    so a folder that exists is whole. Each array is saved as soon as it is sorted and let go:
    a long document's last merge holds one sorted column at a time, not all of them."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)

    def save(name: str, a: np.ndarray) -> None:
        np.save(tmp / f"{name}.npy", a)

    order = np.lexsort((b.doc, b.concept))
    save("offsets", np.searchsorted(b.concept[order], np.arange(len(b.concepts) + 1)).astype(np.int64))
    save("doc", b.doc[order].astype(np.uint32))
    for name in ("node", "labels", "agreement", "meaning"):
        save(name, getattr(b, name)[order])
    del order
    sorder = np.lexsort((b.s_concept, b.s_doc))
    s_doc = b.s_doc[sorder]
    save("s_offsets", np.searchsorted(s_doc, np.arange(len(b.docs) + 1)).astype(np.int64))
    save("s_doc", s_doc.astype(np.uint32))
    del s_doc
    save("s_concept", b.s_concept[sorder].astype(np.uint32))
    save("s_ann", b.s_ann[sorder])
    save("s_pos", b.s_pos[sorder].reshape(-1, 4))
    (tmp / "strings.json").write_text(json.dumps(
        {"concepts": b.concepts, "docs": b.docs, "retires": sorted(b.retires),
         "typed": sorted(b.typed), "dropped": sorted(b.dropped)}), encoding="utf-8")
    os.replace(tmp, folder)


class Segment:
    """One segment, read from its folder (arrays memory-mapped)."""

    def __init__(self, folder: Path) -> None:
        self.name = folder.name
        meta = json.loads((folder / "strings.json").read_text(encoding="utf-8"))
        self.concepts: list[str] = meta["concepts"]
        self.docs: list[str] = meta["docs"]
        self.retires: list[str] = meta["retires"]
        self.typed: list[str] = meta["typed"]
        self.dropped: list[str] = meta["dropped"]
        self.index = {c: i for i, c in enumerate(self.concepts)}
        # mapped, and read as plain arrays (a memmap's slices cost an object each)
        arrays = {k: np.load(folder / f"{k}.npy", mmap_mode="r").view(np.ndarray) for k in _ARRAYS}
        self.doc: np.ndarray = arrays["doc"]
        self.node: np.ndarray = arrays["node"]
        self.labels: np.ndarray = arrays["labels"]
        self.agreement: np.ndarray = arrays["agreement"]
        self.meaning: np.ndarray = arrays["meaning"]
        self.offsets: np.ndarray = arrays["offsets"]
        self.s_concept: np.ndarray = arrays["s_concept"]
        self.s_ann: np.ndarray = arrays["s_ann"]
        self.s_pos: np.ndarray = arrays["s_pos"]
        self.s_offsets: np.ndarray = arrays["s_offsets"]
        self.s_doc: np.ndarray = arrays["s_doc"]
        self._doc_index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.doc) + len(self.s_doc)

    def local(self, doc: str) -> int | None:
        if self._doc_index is None:
            self._doc_index = {d: i for i, d in enumerate(self.docs)}
        return self._doc_index.get(doc)

    def block(self) -> Block:
        concept = np.repeat(np.arange(len(self.concepts), dtype=_NUM), np.diff(self.offsets))
        return Block(self.concepts, self.docs, concept, self.doc.astype(_NUM),
                     np.asarray(self.node), np.asarray(self.labels), np.asarray(self.agreement),
                     np.asarray(self.meaning), frozenset(self.retires), frozenset(self.typed),
                     frozenset(self.dropped), self.s_doc.astype(_NUM),
                     self.s_concept.astype(_NUM), np.asarray(self.s_ann),
                     np.asarray(self.s_pos).reshape(-1, 4))


def _node_number(iri: str) -> int:
    """A posting node's 64-bit number: the 16 hex digits its IRI ends with (``#k…``,
    :func:`~kg_rag.pipeline.postings.node_quads`), else a hash of the IRI."""
    tail = iri.rsplit("#k", 1)[-1]
    if len(tail) == 16:
        with contextlib.suppress(ValueError):
            return int(tail, 16)
    return int.from_bytes(hashlib.sha256(iri.encode("utf-8")).digest()[:8], "big")


# --- the index of one store ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Manifest:
    stamp: str | None
    segments: tuple[str, ...]
    next: int

    def dump(self) -> str:
        return json.dumps({"format": FORMAT, "stamp": self.stamp, "segments": list(self.segments),
                           "next": self.next})


class View:
    """The segments of one manifest, ready to read: documents numbered across segments, and per
    segment which entries a later segment retires."""

    def __init__(self, folder: Path, manifest: Manifest, cache: dict[str, Segment]) -> None:
        self.manifest = manifest
        self.segments = [cache.get(n) or Segment(folder / n) for n in manifest.segments]
        self.docs: list[str] = []
        number: dict[str, int] = {}
        self.doc_numbers: list[np.ndarray] = []
        for seg in self.segments:
            nums = []
            for d in seg.docs:
                n = number.get(d)
                if n is None:
                    n = number[d] = len(self.docs)
                    self.docs.append(d)
                nums.append(n)
            self.doc_numbers.append(np.asarray(nums, dtype=np.int64))
        # every segment's numbering end to end, and where each segment's begins (for postings)
        self._numbers = (np.concatenate(self.doc_numbers) if self.doc_numbers
                         else np.zeros(0, np.int64))
        self._number_base = np.cumsum([0] + [len(s.docs) for s in self.segments])[:-1].astype(np.int64)
        self._in_order = bool(np.array_equal(self._numbers, np.arange(len(self._numbers))))
        # a segment's entries of documents that a later segment retires do not count
        self.alive: list[np.ndarray | None] = []
        retired: set[int] = set()
        live_in = np.zeros(len(self.docs), dtype=np.int64)   # segments a document lives in
        for seg, nums in zip(reversed(self.segments), reversed(self.doc_numbers), strict=True):
            if retired:
                gone = np.fromiter(retired, dtype=np.int64, count=len(retired))
                local_dead = np.isin(nums, gone)
                self.alive.append(None if not local_dead.any() else ~local_dead[seg.doc])
                live_in[nums[~local_dead]] += 1
            else:
                self.alive.append(None)
                live_in[nums] += 1
            retired.update(number[d] for d in seg.retires if d in number)
        self.alive.reverse()
        #: no document lives in two segments: no node can be counted twice (see :meth:`postings`)
        self.disjoint = bool((live_in <= 1).all())
        typed: set[str] = set()
        for seg in self.segments:
            typed.difference_update(seg.dropped)
            typed.update(seg.typed)
        #: how many documents the store holds (``select-document-count``)
        self.documents = len(typed)
        # per segment, the documents a later segment drops (their spans there no longer count)
        self.dropped_after: list[set[str]] = []
        later: set[str] = set()
        for seg in reversed(self.segments):
            self.dropped_after.append(set(later))
            later.update(seg.dropped)
        self.dropped_after.reverse()

    def spans(self, doc: str, concepts: Iterable[str]) -> dict[str, dict[int, tuple[int, int, int, int]]]:
        """concept → annotation number → (start, end, passage start, passage end), for the
        annotations of ``doc`` with one of ``concepts`` among their candidates."""
        want = set(concepts)
        out: dict[str, dict[int, tuple[int, int, int, int]]] = {}
        for seg, gone in zip(self.segments, self.dropped_after, strict=True):
            i = seg.local(doc)
            if i is None or doc in gone:
                continue
            a, b = int(seg.s_offsets[i]), int(seg.s_offsets[i + 1])
            for j, c in zip(range(a, b), seg.s_concept[a:b].tolist(), strict=True):
                iri = seg.concepts[c]
                if iri in want:
                    pos = seg.s_pos[j]
                    out.setdefault(iri, {})[int(seg.s_ann[j])] = (
                        int(pos[0]), int(pos[1]), int(pos[2]), int(pos[3]))
        return out

    def postings(self, concepts: Sequence[str]) -> Found:
        """The live entries of ``concepts`` (each given once), concept by concept, and for each
        segment by segment and in each by document.

        Read for all the concepts at once: each (concept, segment) range is a slice of the
        segment's columns, and each column one concatenation of all the slices. Read one
        (concept, segment) at a time, each cost ~3.5 µs of numpy calls — a question asks for
        ~135 concepts over ~9 segments at 100,000 documents, most of its ranking
        (bench/ANALYSIS.md)."""
        k, n_seg = len(concepts), len(self.segments)
        start = np.zeros((k, n_seg), dtype=np.int64)
        end = np.zeros((k, n_seg), dtype=np.int64)
        for j, seg in enumerate(self.segments):
            get = seg.index.get
            found = [(q, i) for q, c in enumerate(concepts) if (i := get(c)) is not None]
            if found:
                q, at = np.asarray(found, dtype=np.int64).T
                start[q, j], end[q, j] = seg.offsets[at], seg.offsets[at + 1]
        # the (concept, segment) ranges with rows, concept by concept
        qq, jj = np.nonzero(end > start)
        if not len(qq):
            return Found(list(concepts), np.zeros(k + 1, np.int64), (
                np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)))
        lens = end[qq, jj] - start[qq, jj]
        pieces = list(zip(jj.tolist(), start[qq, jj].tolist(), end[qq, jj].tolist(), strict=True))

        def column(name: str) -> np.ndarray:
            arrays = [getattr(seg, name) for seg in self.segments]
            return np.concatenate([arrays[j][s:e] for j, s, e in pieces])

        # a row's document number, from its segment's numbering (the segments' tables end to end;
        # when each segment numbers only documents new to it, the numbering is their order)
        doc = column("doc") + np.repeat(self._number_base[jj], lens)
        if not self._in_order:
            doc = self._numbers[doc]
        cols: Columns = (doc, column("labels"), column("agreement"), column("meaning"))
        key = np.repeat(qq, lens)   # each row's concept (its place in ``concepts``)
        node = None if self.disjoint else column("node")
        if any(alive is not None for alive in self.alive):   # entries a later segment retires
            keep = np.concatenate([np.ones(e - s, bool) if (al := self.alive[j]) is None else al[s:e]
                                   for j, s, e in pieces])
            cols, key = (cols[0][keep], cols[1][keep], cols[2][keep], cols[3][keep]), key[keep]
            node = None if node is None else node[keep]
        # the same node written twice (a write repeated without a drop) counts once, as in the
        # store: per concept, the first of each (document, node) in the segments' order
        first = None if node is None else _firsts(key, cols[0], node)
        if first is not None:
            cols, key = (cols[0][first], cols[1][first], cols[2][first], cols[3][first]), key[first]
        bounds = np.concatenate(([0], np.cumsum(np.bincount(key, minlength=k)))).astype(np.int64)
        return Found(list(concepts), bounds, cols)


@dataclass(frozen=True, slots=True)
class Found:
    """:meth:`View.postings`'s answer: concept ``concepts[i]``'s entries are the rows
    ``bounds[i]:bounds[i + 1]`` of the columns (document number, labels, agreement, meaning)."""

    concepts: list[str]
    bounds: np.ndarray
    cols: Columns


class Index:
    """The posting index of one (on-disk or remote) store, in the registry's cache folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._segments: dict[str, Segment] = {}
        self._view: View | None = None

    # -- the manifest ------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Between processes (a file lock) and threads."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.folder / "lock", "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def manifest(self) -> Manifest | None:
        try:
            data = json.loads((self.folder / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if data.get("format") != FORMAT:
            return None
        return Manifest(data["stamp"], tuple(data["segments"]), int(data["next"]))

    def _save(self, m: Manifest) -> None:
        tmp = self.folder / "manifest.json.tmp"
        tmp.write_text(m.dump(), encoding="utf-8")
        os.replace(tmp, self.folder / "manifest.json")
        self._sweep(m)

    def _sweep(self, m: Manifest) -> None:
        """Remove segment folders no manifest names any more (a reader that still maps one keeps
        its files open until it lets them go)."""
        keep = set(m.segments)
        for p in self.folder.iterdir():
            if p.is_dir() and p.name not in keep:
                shutil.rmtree(p, ignore_errors=True)
        # and let go of the mapped files of segments merged away (a long run merges hundreds)
        self._segments = {n: seg for n, seg in self._segments.items() if n in keep}

    def view(self, current: str | None) -> View | None:
        """The index as of stamp ``current``, or None when it is not at that stamp."""
        if current is None:
            return None
        m = self.manifest()
        if m is None or m.stamp != current:
            return None
        view = self._view
        if view is None or view.manifest != m:
            try:
                view = View(self.folder, m, self._segments)
            except (OSError, ValueError, KeyError) as e:   # a segment swept by a newer manifest
                log.debug("posting index not readable now: %s", e)
                return None
            self._segments = {s.name: s for s in view.segments}
            self._view = view
        return view

    # -- writes ------------------------------------------------------------------------------
    def append(self, before: str | None, after: str, change: Change | None) -> None:
        """The follower's work: ``change`` as a segment, when the index was at ``before``."""
        with self.locked():
            m = self.manifest()
            if m is None or before is None or m.stamp != before or change is None:
                return
            e = _from_change(change)
            if e is None:
                return   # the index stays at the old stamp: out of date
            segments, nxt = list(m.segments), m.next
            if e.doc or e.retires or e.typed or e.dropped or e.spans:
                block = Block.of(e)
                while segments:   # merge into the segment before while it is not much larger
                    prev = self._segment(segments[-1])
                    if not _mergeable(len(prev), len(block)):
                        break
                    block = _merge(prev.block(), block, keep_retires=len(segments) > 1)
                    segments.pop()
                name = f"s{nxt:08d}"
                _write_segment(self.folder / name, block)
                segments.append(name)
                nxt += 1
            self._save(Manifest(after, tuple(segments), nxt))

    def _segment(self, name: str) -> Segment:
        seg = self._segments.get(name)
        if seg is None:
            seg = self._segments[name] = Segment(self.folder / name)
        return seg

    def reset(self, at: str, blocks: Sequence[Block]) -> None:
        """Replace the whole index by one segment per block, in order, at stamp ``at``."""
        with self.locked():
            m = self.manifest()
            nxt = m.next if m is not None else 0
            names = []
            for block in blocks:
                names.append(f"s{nxt:08d}")
                _write_segment(self.folder / names[-1], block)
                nxt += 1
            self._save(Manifest(at, tuple(names), nxt))


_TYPE, _DOCUMENT = RDF.type.value, KGR.Document.value
_CANDIDATE, _PASSAGE, _TARGET, _SELECTOR = (KGR.candidateConcept.value, KGR.passage.value,
                                            OA.hasTarget.value, OA.hasSelector.value)
_OA_START, _OA_END, _START, _END = OA.start.value, OA.end.value, KGR.start.value, KGR.end.value
#: what places an annotation (``select-document-concept-spans``)
_SPAN_PREDICATES = {_CANDIDATE, _PASSAGE, _TARGET, _SELECTOR, _OA_START, _OA_END, _START, _END}


def _is_typing(q: Quad) -> bool:
    """``<D> a kgr:Document`` in the graph ``<D>`` of a document."""
    return (q.predicate.value == _TYPE and getattr(q.object, "value", None) == _DOCUMENT
            and stamp.is_document(q.graph_name) and getattr(q.subject, "value", None) == getattr(q.graph_name, "value", ""))


def _from_change(change: Change) -> Entries | None:
    """A write's postings: the posting nodes it inserts, the documents it types and drops, and
    those whose earlier postings it removes (graphs dropped; posting quads deleted); and where
    the annotations it inserts are. None when the write changes the annotations' spans in a way
    a segment cannot say (deletes some of them, or adds an annotation it does not place)."""
    out = Entries()
    out.dropped = {g.value for g in change.drop_graphs if stamp.is_document(g)}
    out.retires = set(out.dropped)
    for q in change.delete:
        if not stamp.is_document(q.graph_name):
            continue
        g = getattr(q.graph_name, "value", "")
        if q.predicate.value in _PREDICATES:
            out.retires.add(g)
        elif _is_typing(q):
            out.dropped.add(g)
        elif q.predicate.value in _SPAN_PREDICATES:
            return None
    nodes: dict[tuple[str, str], list[str | None]] = {}
    facts: dict[tuple[str, str], dict[str, list[str]]] = {}   # (graph, subject) → predicate → objects
    for q in change.insert:
        k = _PREDICATES.get(q.predicate.value)
        if k is None:
            if _is_typing(q):
                out.typed.add(getattr(q.subject, "value", ""))
            elif q.predicate.value in _SPAN_PREDICATES and stamp.is_document(q.graph_name):
                key = (getattr(q.graph_name, "value", ""), getattr(q.subject, "value", ""))
                facts.setdefault(key, {}).setdefault(q.predicate.value, []).append(
                    getattr(q.object, "value", ""))
            continue
        if not stamp.is_document(q.graph_name):
            continue
        key = (getattr(q.graph_name, "value", ""), getattr(q.subject, "value", ""))
        slot = nodes.setdefault(key, [None] * 4)
        slot[k] = getattr(q.object, "value", None)
    for (doc, node), (c, labels, agreement, meaning) in nodes.items():
        if c is None or labels is None or agreement is None or meaning is None:
            continue   # not a whole posting node: the store's reader would not see it either
        out.concept.append(c)
        out.doc.append(doc)
        out.node.append(_node_number(node))
        out.labels.append(int(labels))
        out.agreement.append(float(agreement))
        out.meaning.append(float(meaning))
    for (doc, ann), f in facts.items():
        cands = f.get(_CANDIDATE)
        if not cands:
            continue
        placed = _place(doc, f, facts)
        if placed is None:
            return None
        for c in cands:
            out.spans.append((doc, c, _node_number(ann), placed))
    return out


def _place(doc: str, ann: dict[str, list[str]],
           facts: dict[tuple[str, str], dict[str, list[str]]]) -> tuple[int, int, int, int] | None:
    """An annotation's (start, end, passage start, passage end), from the quads of the write."""
    try:
        passage = facts[(doc, ann[_PASSAGE][0])]
        target = facts[(doc, ann[_TARGET][0])]
        for sel in target[_SELECTOR]:
            f = facts.get((doc, sel), {})
            if _OA_START in f and _OA_END in f:
                return (int(f[_OA_START][0]), int(f[_OA_END][0]),
                        int(passage[_START][0]), int(passage[_END][0]))
    except (KeyError, IndexError, ValueError):
        return None
    return None


# --- the module's interface ----------------------------------------------------------------

_INDEXES: dict[str, Index] = {}
_INDEXES_LOCK = threading.Lock()


#: the cache folders this process swept (once a process)
_SWEPT: set[str] = set()
#: the file in an index's folder that lists, a line each, the stores that opened it: the
#: engine's kind and where it is, tab-separated (``embedded`` and the store's absolute folder,
#: ``remote`` and the endpoint)
USERS = "stores"
#: an index that names no store (one written before the list existed) goes when its manifest
#: has not changed for this long (the cache folder's one age rule, :data:`STALE_DAYS`)
UNNAMED_DAYS = STALE_DAYS
#: the (index folder, store location) pairs this process has noted
_NOTED: set[tuple[str, str]] = set()


@dataclass(frozen=True, slots=True)
class _User:
    """How a store is named in an index's list of users (:meth:`Store.on_engine`)."""

    location: str

    def embedded(self, engine: object) -> str:
        return f"embedded\t{Path(self.location).resolve()}"

    def remote(self, endpoint: str) -> str:
        return f"remote\t{endpoint}"


def _gone(user: str) -> bool:
    """True when ``user`` (a line of :data:`USERS`) is an embedded store's folder that no longer
    exists; an endpoint, or a line this version does not read, is never taken for gone."""
    kind, _, where = user.partition("\t")
    return kind == "embedded" and bool(where) and not os.path.exists(where)


def _note_user(folder: Path, key: str, store: Store) -> None:
    """Add ``store`` to the stores that opened the index in ``folder`` (``key``: its name as a
    string; once a process)."""
    noted = (key, store.location)
    if noted in _NOTED or not _keeps(store):
        return
    _NOTED.add(noted)
    me = store.on_engine(_User(store.location))
    path = folder / USERS
    with contextlib.suppress(OSError):
        if me in path.read_text(encoding="utf-8").splitlines():
            return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(me + "\n")
    except OSError as e:   # the index still works; only its removal waits for the age rule
        log.debug("could not note the store that opened %s: %s", folder, e)


def _orphaned(folder: Path, now: float) -> bool:
    """An index of this format that nothing can use any more: every store that opened it is a
    local folder that is gone, or it names no store and has not changed for ``UNNAMED_DAYS``."""
    try:
        users = [u for u in (folder / USERS).read_text(encoding="utf-8").splitlines() if u]
    except FileNotFoundError:
        try:
            changed = (folder / "manifest.json").stat().st_mtime
        except OSError:   # no manifest yet: an index being made right now
            return False
        return now - changed > UNNAMED_DAYS * 86400
    except OSError:
        return False
    return bool(users) and all(_gone(u) for u in users)


def _sweep_cache(parent: Path) -> None:
    """Once a process, remove from ``parent`` the indexes no version or store can use: those of
    older formats (``<format>-<identity>``; no version of kg-rag that writes this format reads
    them, and an upgrade left them behind) and those of this format whose stores are all gone
    (every test run and every scratch store left one: 1,185 folders, 3.1 GB, on a machine that
    runs the tests). A copy of a store shares its original's index; once the copy has been
    opened, it keeps the index when the original goes."""
    if str(parent) in _SWEPT:
        return
    _SWEPT.add(str(parent))
    older = orphans = 0
    now = time.time()
    with contextlib.suppress(OSError):
        for p in parent.iterdir():
            fmt = p.name.split("-", 1)[0]
            if not (p.is_dir() and fmt.isdigit()):
                continue
            if int(fmt) < FORMAT:
                shutil.rmtree(p, ignore_errors=True)
                older += 1
            elif int(fmt) == FORMAT and _orphaned(p, now):
                shutil.rmtree(p, ignore_errors=True)
                orphans += 1
    if older or orphans:
        log.info("removed %d posting indexes of older formats and %d of stores that are gone "
                 "from %s", older, orphans, parent)


def _index(store: Store, identity: str) -> Index:
    parent = Derived.of(store).cache_dir / "postings"
    folder = parent / (f"{FORMAT}-" + hashlib.sha256(identity.encode()).hexdigest()[:20])
    key = str(folder)
    with _INDEXES_LOCK:
        _note_user(folder, key, store)
        _sweep_cache(parent)
        idx = _INDEXES.get(key)
        if idx is None:
            idx = _INDEXES[key] = Index(folder)
        return idx


def _keeps(store: Store) -> bool:
    return store.location not in ("", ":memory:")


def current(store: Store) -> View | None:
    """The index as of the store's stamp (one small query), or None when it is not current —
    or the store keeps none (in memory) or has no stamp yet."""
    if not _keeps(store):
        return None
    tokens, identity = stamp.state(store)
    if identity is None or len(tokens) != 1 or not stamp.finished(tokens[0]):
        return None
    return _index(store, identity).view(tokens[0])


def index_of(store: Store) -> Index | None:
    """The store's posting index (None for an in-memory store, or one without a stamp yet). It
    is named by the store's identity (:func:`kg_rag.store.stamp.move`), not its folder: a copy
    of the store shares it, and is current in it while its stamp is the manifest's."""
    if not _keeps(store):
        return None
    identity = stamp.state(store)[1]
    return None if identity is None else _index(store, identity)


def _follower(store: Store, before: str | None, after: str, change: Change | None) -> None:
    idx = index_of(store)
    if idx is None:
        return
    try:
        idx.append(before, after, change)
    except (OSError, ValueError, KeyError) as e:   # the write stands; the index falls behind
        log.warning("could not keep the ranking's posting index current (%s); ranking reads "
                    "the store until the next index run rebuilds it", e)


def follow(store: Store) -> None:
    """Keep the store's posting index current with this process's writes."""
    if _keeps(store):
        store.follow_documents(_follower)


def arrays(store: Store, concepts: Sequence[str]) -> tuple[list[str], Found, int] | None:
    """The postings of ``concepts`` as the store's posting nodes hold them, when the index is at
    the store's stamp (None when it is not: read the store instead): the documents' IRIs by
    number; per concept, one entry per node — (document number, label count, agreement sum,
    meaning probability), in document order within each segment; and how many documents the
    store has."""
    view = current(store)
    if view is None:
        return None
    return view.docs, view.postings(list(dict.fromkeys(concepts))), view.documents


def spans(store: Store, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[int, int, int, int]]] | None:
    """(document, concept) → (start, end, passage start, passage end) of each annotation of the
    document with the concept among its candidates, in document order — as
    ``select-document-concept-spans`` gives them — when the index is current; else None."""
    view = current(store)
    if view is None:
        return None
    by_doc: dict[str, list[str]] = {}
    for d, c in pairs:
        by_doc.setdefault(d, []).append(c)
    out: dict[tuple[str, str], list[tuple[int, int, int, int]]] = {}
    for d, cs in by_doc.items():
        for c, anns in view.spans(d, cs).items():
            out[(d, c)] = sorted(anns.values())
    return out


def refresh(store: Store) -> bool:
    """Rebuild the index from the store's postings unless it is current (after indexing, by the
    writer; logs what it does). Returns whether the index is current now."""
    if not _keeps(store) or store.read_only:
        return False
    follow(store)
    with store.write_lock:
        tokens, identity = stamp.state(store)
        if len(tokens) == 1 and not stamp.finished(tokens[0]):
            return False   # a write under way (another process), or one that failed: later
        if len(tokens) != 1 or identity is None:   # none yet, or two writers raced: set one
            stamp.move(store)
            tokens, identity = stamp.state(store)
            if len(tokens) != 1 or identity is None or not stamp.finished(tokens[0]):
                return False
        now = tokens[0]
        idx = _index(store, identity)
        if idx.view(now) is not None:
            return True
        docs = [r["doc"] for r in store.select("select-documents")]
        if len(docs) >= BATCH:
            log.info("building the ranking's posting index for %d documents", len(docs))
        blocks: list[Block] = []
        for i in range(0, len(docs), BATCH):
            entries = Entries()
            rows = store.select("select-postings-of-documents",
                                values=Values.column("doc", docs[i:i + BATCH]))
            for r in rows:
                entries.concept.append(r["concept"].value)
                entries.doc.append(r["doc"].value)
                entries.node.append(_node_number(r["p"].value))
                entries.labels.append(int(r["labels"].value))
                entries.agreement.append(float(r["agreement"].value))
                entries.meaning.append(float(r["meaning"].value))
            for r in store.select("select-document-concept-spans",
                                  values=Values.column("doc", docs[i:i + BATCH])):
                entries.spans.append((r["doc"].value, r["concept"].value, _node_number(r["ann"].value),
                                      (int(r["start"].value), int(r["end"].value),
                                       int(r["pstart"].value), int(r["pend"].value))))
            _push(blocks, Block.of(entries))
            del entries, rows
        if stamp.read(store) != now or now is None:
            return False   # written meanwhile (a remote store): the next refresh tries again
        # the blocks hold disjoint documents (one batch each), so they stay segments as they are;
        # the store's documents are typed in the last
        last = blocks.pop() if blocks else Block.of(Entries())
        blocks.append(dataclasses.replace(last, typed=frozenset(d.value for d in docs)))
        idx.reset(now, blocks)
        return True


def _push(blocks: list[Block], block: Block) -> None:
    """A rebuild's next batch of documents, as a block: merged into the blocks before it while
    they are not much larger (as segments are, :data:`MERGE_RATIO`), so a rebuild holds its
    postings as arrays — not as Python strings and numbers, which for a large store are
    gigabytes — and copies each row O(log n) times."""
    while blocks and _mergeable(len(blocks[-1]), len(block)):
        block = _merge(blocks.pop(), block, keep_retires=False)
    blocks.append(block)


def _mergeable(before: int, new: int) -> bool:
    """Is a segment of ``before`` rows merged with the ``new`` one after it? While it is not
    much larger (:data:`MERGE_RATIO`) and the merge stays within :data:`MAX_MERGED` rows."""
    return before <= MERGE_RATIO * max(1, new) and before + new <= MAX_MERGED


def status(store: Store) -> dict[str, object]:
    """What ``kg-rag postings`` shows: whether the store keeps an index, where, whether it is
    current, its segments and entries."""
    if not _keeps(store):
        return {"kept": False, "current": False, "why": "an in-memory store keeps no posting index"}
    tokens, identity = stamp.state(store)
    if identity is None:
        return {"kept": False, "current": False,
                "why": "no document was written through this kg-rag yet"}
    idx = _index(store, identity)
    m = idx.manifest()
    # what current() answers, from the stamp just read
    view = idx.view(tokens[0]) if len(tokens) == 1 and stamp.finished(tokens[0]) else None
    out: dict[str, object] = {"kept": True, "current": view is not None, "folder": str(idx.folder),
                              "stamp": tokens[0] if len(tokens) == 1 else None,
                              "index_stamp": m.stamp if m else None}
    if view is not None:
        out.update(segments=len(view.segments), documents=view.documents,
                   postings=sum(len(s.doc) for s in view.segments),
                   spans=sum(len(s.s_doc) for s in view.segments))
    elif len(tokens) == 1 and not stamp.finished(tokens[0]):
        out["why"] = "a write is under way, or one failed: the next write or index run settles it"
    elif len(tokens) > 1:
        out["why"] = "two writers raced on this store: the next index run rebuilds it"
    else:
        out["why"] = ("a write it could not follow (a SPARQL update, another tool, another "
                      "process's write): rebuild it with `kg-rag postings --rebuild` or any index run")
    return out


__all__ = ["FORMAT", "Columns", "Found", "Index", "View", "arrays", "current", "follow", "index_of", "refresh", "spans", "status"]
