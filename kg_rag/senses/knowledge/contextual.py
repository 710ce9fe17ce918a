"""The contextual signal of English mentions: how close the mention's token vector in its
passage is to each candidate's token vector in its own definition and examples.

A sense's vector is built from the dictionary alone, as LMMS and SREF-kb build theirs without
sense-annotated text (Loureiro & Jorge 2019; Wang & Wang 2020): the lemma's contextual vector in
"lemma - definition" and in each of the sense's examples that contains the lemma (or, for a
one-word lemma, one of its inflected forms), averaged and normalised. The mention's vector is
its own word pieces' vector in its passage. The selector adds ``Weights.context * cos`` to each
candidate's score (:func:`~kg_rag.senses.knowledge.selector.combine`); a candidate with no
English definition gets the mean cosine of the others (no evidence either way), and with fewer
than two vectors among the candidates the signal is absent.

The encoder (:mod:`kg_rag.text.encoder`) was trained on English text. A passage in another
language is read through its words' English translations instead, for one kind of candidate:
the sense-only readings of a dictionary (``dictionary`` regime,
:mod:`~kg_rag.senses.knowledge.dictionary`), whose definitions are English (Strong's Hebrew
lexicon). The English lemmas the selector's bridge reaches from the context words (each context
word's concepts in the wordnets of its language → their English lemmas,
:meth:`~kg_rag.senses.knowledge.selector.KnowledgeSelector._prepare`), the
:data:`BRIDGE_WORDS` most strongly reached first, are read as one text, and its sentence vector
(:meth:`~kg_rag.text.encoder.TokenEncoder.sentence`) is compared with each sense's ("labels.
definitions"): :meth:`ContextualSenses.bridge_cosines` (docs/EVALUATION.md, "A dictionary
without concepts"). Outside that regime the bag of translations was measured as noise (es / fr
WordNet senses) and is not used.

Vectors cost a few milliseconds each, so they are kept: in the process, and between processes
in the shared facts table (:func:`kg_rag.pipeline.kept_facts.shared_facts`), keyed by a hash of
what they are made of — a load of another vocabulary, or another store with the same
dictionary, does not make them again.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from kg_rag.cache import LRU
from kg_rag.model import Candidate, SelectionRequest, SenseEvidence
from kg_rag.text.analyse import lemma_at
from kg_rag.text.encoder import TokenEncoder, span_vector
from kg_rag.text.normalise import base_language

if TYPE_CHECKING:
    from kg_rag.pipeline.kept_facts import KeptFacts, Kind

T = TypeVar("T")

#: how a sense vector is made: part of its kept key, so a new recipe never reads an old vector
RECIPE = "all-MiniLM-L6-v2/last4/lemma - definition + examples/2"
#: how a sense's sentence vector is made (:meth:`ContextualSenses.bridge_cosines`)
SENTENCE_RECIPE = "all-MiniLM-L6-v2/mean last layer/labels. definitions/1"
#: the English bridge words read as a passage's text (the most strongly reached first)
BRIDGE_WORDS = 60
_NONE = np.zeros(0, dtype=np.float32)   # kept for a sense with no vector


def english(lang: str | None) -> bool:
    return base_language(lang or "") in ("en", "")


def _texts(cand: Candidate, ev: SenseEvidence) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """What a sense vector is made of: the lemma, the English definitions and examples."""
    return (cand.lemma.replace("_", " ").strip(),
            tuple(d.text.strip() for d in ev.definitions if english(d.lang) and d.text.strip()),
            tuple(x.text for x in ev.examples if english(x.lang)))


def _key(cand: Candidate, ev: SenseEvidence) -> str:
    """The vector's key: a hash of the recipe and of everything it is made of (not of the
    sense's IRI), so a vector outlives a load and serves every store with the same dictionary."""
    lemma, defs, examples = _texts(cand, ev) if english(cand.lang) else ("", (), ())
    h = hashlib.sha256(RECIPE.encode())
    for part in (lemma, *defs, "\x1e", *examples):
        h.update(b"\x1f" + part.encode())
    return h.hexdigest()[:32]


def _sense_text(ev: SenseEvidence) -> str:
    """What a sense's sentence vector reads: its labels, then its definitions ("" if neither)."""
    labels = " ".join(t.text.strip() for t in ev.labels if t.text.strip())
    defs = " ".join(t.text.strip() for t in ev.definitions if t.text.strip())
    return f"{labels}. {defs}" if labels or defs else ""


def _sentence_key(text: str) -> str:
    h = hashlib.sha256(SENTENCE_RECIPE.encode())
    h.update(b"\x1f" + text.encode())
    return h.hexdigest()[:32]


def bridge_text(bridge: Mapping[str, float]) -> str:
    """The :data:`BRIDGE_WORDS` English words most strongly reached (ties in the order they
    came), as one text."""
    ranked = sorted(bridge.items(), key=lambda kv: -kv[1])[:BRIDGE_WORDS]
    return " ".join(w.replace("_", " ") for w, _ in ranked)


def _half(v: np.ndarray) -> bytes:
    """A vector as it is kept: half precision, little-endian (b"": none)."""
    return v.astype("<f2").tobytes() if v.size else b""


def _pack(raw: bytes) -> str | None:
    return base64.b64encode(raw).decode("ascii") if raw else None


def _raw(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def _unpack(raw: bytes) -> np.ndarray:
    """A kept vector in single precision, normalised (the empty array: none)."""
    if not raw:
        return _NONE
    v = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-12)


#: bytes of vectors a process keeps (each kind: sense vectors, sentence vectors). Held as kept
#: (half precision, ~1 kB an entry with its key and slot, not ~1.7 kB in single precision), so
#: ~30,000 of each; a long text meets more (43,000 sense vectors for the bench's 1 MB text) and
#: reads the rest again from the kept facts (bench/ANALYSIS.md, issue 17's memory row).
KEEP_BYTES = 32 << 20


def _weight(raw: bytes) -> int:
    return len(raw) + 200   # the bytes object's header, the 32-character key, the LRU's slot


class ContextualSenses:
    """Sense vectors (kept under a hash of their texts, :func:`_key`) and the cosine of each
    request's candidates."""

    def __init__(self, encoder: TokenEncoder, kept: KeptFacts | None = None,
                 keep_bytes: int = KEEP_BYTES) -> None:
        self.encoder = encoder
        self.kept = kept
        self._senses: LRU[str, bytes] = LRU(None, budget=keep_bytes, weigh=_weight)
        self._sentences: LRU[str, bytes] = LRU(None, budget=keep_bytes, weigh=_weight)

    def _build(self, cand: Candidate, ev: SenseEvidence) -> np.ndarray:
        lemma, defs, examples = _texts(cand, ev)
        if not lemma or not english(cand.lang):
            return _NONE
        vecs: list[np.ndarray] = []
        for d in defs:
            pieces, offsets = self.encoder.encode(f"{lemma} - {d}")
            v = span_vector(pieces, offsets, 0, len(lemma))
            if v is not None:
                vecs.append(v)
        if not vecs:   # no English definition: the examples alone are too few to speak for it
            return _NONE
        for x in examples:
            at = lemma_at(x, lemma, "en")
            if at is not None:
                pieces, offsets = self.encoder.encode(x)
                v = span_vector(pieces, offsets, *at)
                if v is not None:
                    vecs.append(v)
        out = np.asarray(np.mean(vecs, axis=0), dtype=np.float32)
        return np.asarray(out / max(float(np.linalg.norm(out)), 1e-12))

    def vectors(self, wanted: Mapping[str, tuple[Candidate, SenseEvidence]]) -> dict[str, np.ndarray]:
        """The vector of each candidate of ``wanted`` (by its :func:`_key`; an empty array: none),
        from this process, the kept facts, or made now and kept."""
        return self._kept(self._senses, "vectors", wanted, lambda pair: self._build(*pair))

    def _kept(self, lru: LRU[str, bytes], kind: Kind, wanted: Mapping[str, T],
              make: Callable[[T], np.ndarray]) -> dict[str, np.ndarray]:
        """Each key's vector from ``lru``, the kept facts of ``kind``, or ``make`` (then kept).
        Every vector is read from its kept form (half precision): a vector made now, one read
        later and one held by the process give one decision."""
        found, missing = lru.split(wanted)
        if missing and self.kept is not None:
            for k, text in self.kept.get_many(kind, missing).items():
                found[k] = _raw(text)
                lru.put(k, found[k])
            missing = [k for k in missing if k not in found]
        made: dict[str, str | None] = {}
        for k in missing:
            found[k] = _half(make(wanted[k]))
            made[k] = _pack(found[k])
            lru.put(k, found[k])
        if made and self.kept is not None:
            self.kept.put_many(kind, made)
        return {k: _unpack(raw) for k, raw in found.items()}

    def cosines(self, requests: Sequence[SelectionRequest]) -> list[list[float] | None]:
        """Per request, each candidate's cosine, or None (fewer than two candidates with a
        vector, or the mention's pieces not found)."""
        keys: list[list[str]] = []
        wanted: dict[str, tuple[Candidate, SenseEvidence]] = {}
        for req in requests:   # each candidate's key, hashed once
            cands = req.mention.candidates
            pairs = list(zip(cands, req.evidence, strict=True)) if len(cands) > 1 else []
            keys.append([_key(c, ev) for c, ev in pairs])
            wanted.update(zip(keys[-1], pairs, strict=True))
        vecs = self.vectors(wanted)
        passages: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        out: list[list[float] | None] = []
        for req, ks in zip(requests, keys, strict=True):
            svecs = [vecs[k] for k in ks]
            if sum(v.size > 0 for v in svecs) < 2:
                out.append(None)
                continue
            enc = passages.get(req.context)
            if enc is None:
                enc = passages[req.context] = self.encoder.encode(req.context)
            tv = span_vector(enc[0], enc[1], req.mention.start, req.mention.end)
            if tv is None:
                out.append(None)
                continue
            tv = tv / max(float(np.linalg.norm(tv)), 1e-12)
            out.append(_filled([float(tv @ v) if v.size else None for v in svecs]))
        return out

    def _sentence_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The sentence vector of each sense text (by :func:`_sentence_key`), kept like the
        sense vectors."""
        return self._kept(self._sentences, "sentences", {_sentence_key(t): t for t in texts if t},
                          self.encoder.sentence)

    def bridge_cosines(self, requests: Sequence[SelectionRequest],
                       bridges: Sequence[Mapping[str, float]]) -> list[list[float] | None]:
        """Per request, each candidate's cosine between the sentence vector of its bridge words
        (:func:`bridge_text`) and the sense's ("labels. definitions"); None without bridge
        words or with fewer than two candidates that have a text. A passage's text is encoded
        once per call."""
        live: list[tuple[str, list[str]] | None] = []   # (bridge text, sense texts) of each request
        for req, bridge in zip(requests, bridges, strict=True):
            ts = [_sense_text(ev) for ev in req.evidence]
            ctx = bridge_text(bridge) if len(req.mention.candidates) > 1 else ""
            live.append((ctx, ts) if ctx and sum(1 for t in ts if t) >= 2 else None)
        vecs = self._sentence_vectors([t for x in live if x is not None for t in x[1]])
        passages: dict[str, np.ndarray] = {}
        out: list[list[float] | None] = []
        for x in live:
            if x is None:
                out.append(None)
                continue
            ctx, ts = x
            cv = passages.get(ctx)
            if cv is None:
                cv = passages[ctx] = self.encoder.sentence(ctx)
            out.append(_filled([float(cv @ vecs[_sentence_key(t)]) if t else None for t in ts]))
        return out


def _filled(cos: list[float | None]) -> list[float]:
    """Each candidate's cosine, the mean of the others' where it has none (no evidence either
    way); at least one is known."""
    known = [c for c in cos if c is not None]
    mean = sum(known) / len(known)
    return [c if c is not None else mean for c in cos]
