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

English only: the encoder (:mod:`kg_rag.text.encoder`) was trained on English text. Sense
vectors cost a few milliseconds each, so they are kept: in the process, and between processes
in the store's kept facts (:mod:`kg_rag.pipeline.kept_facts`, under the catalog version).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kg_rag.cache import LRU
from kg_rag.model import Candidate, SelectionRequest, SenseEvidence
from kg_rag.text.analyse import lemma_at
from kg_rag.text.encoder import TokenEncoder, span_vector
from kg_rag.text.normalise import base_language

if TYPE_CHECKING:
    from kg_rag.pipeline.kept_facts import KeptFacts

#: how a sense vector is made: part of its kept key, so a new recipe never reads an old vector
RECIPE = "minilm-l6/last4/gloss+examples/1"
_NONE = np.zeros(0, dtype=np.float32)   # kept for a sense with no vector


def english(lang: str | None) -> bool:
    return base_language(lang or "") in ("en", "")


def _key(cand: Candidate) -> str:
    # a concept reached by a label has no sense: the label it matched is part of what is encoded
    return f"{RECIPE}\x1f{cand.id}\x1f{cand.lemma}"


def _pack(v: np.ndarray) -> str | None:
    return base64.b64encode(v.astype("<f2").tobytes()).decode("ascii") if v.size else None


def _unpack(text: str | None) -> np.ndarray:
    if not text:
        return _NONE
    v = np.frombuffer(base64.b64decode(text), dtype="<f2").astype(np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-12)


class ContextualSenses:
    """Sense vectors (kept by sense and lemma) and the cosine of each request's candidates."""

    def __init__(self, encoder: TokenEncoder, kept: KeptFacts | None = None, keep: int = 200_000) -> None:
        self.encoder = encoder
        self.kept = kept
        self._senses: LRU[str, np.ndarray] = LRU(keep)

    def _build(self, cand: Candidate, ev: SenseEvidence) -> np.ndarray:
        lemma = cand.lemma.replace("_", " ").strip()
        if not lemma or not english(cand.lang):
            return _NONE
        vecs: list[np.ndarray] = []
        for d in ev.definitions:
            if english(d.lang) and d.text.strip():
                pieces, offsets = self.encoder.encode(f"{lemma} - {d.text.strip()}")
                v = span_vector(pieces, offsets, 0, len(lemma))
                if v is not None:
                    vecs.append(v)
        if not vecs:   # no English definition: the examples alone are too few to speak for it
            return _NONE
        for x in ev.examples:
            at = lemma_at(x.text, lemma, "en") if english(x.lang) else None
            if at is not None:
                pieces, offsets = self.encoder.encode(x.text)
                v = span_vector(pieces, offsets, *at)
                if v is not None:
                    vecs.append(v)
        out = np.asarray(np.mean(vecs, axis=0), dtype=np.float32)
        return np.asarray(out / max(float(np.linalg.norm(out)), 1e-12))

    def vectors(self, pairs: Sequence[tuple[Candidate, SenseEvidence]]) -> dict[str, np.ndarray]:
        """The vector of each candidate (by :func:`_key`; an empty array: none), from this
        process, the kept facts, or made now and kept."""
        wanted = {_key(c): (c, ev) for c, ev in pairs}
        found, missing = self._senses.split(wanted)
        if missing and self.kept is not None:
            for k, text in self.kept.get_many("vectors", missing).items():
                found[k] = _unpack(text)
                self._senses.put(k, found[k])
            missing = [k for k in missing if k not in found]
        made: dict[str, str | None] = {}
        for k in missing:
            made[k] = _pack(self._build(*wanted[k]))
            # as kept (half precision): a vector made now and one read later give one decision
            v = found[k] = _unpack(made[k])
            self._senses.put(k, v)
        if made and self.kept is not None:
            self.kept.put_many("vectors", made)
        return found

    def cosines(self, requests: Sequence[SelectionRequest]) -> list[list[float] | None]:
        """Per request, each candidate's cosine, or None (fewer than two candidates with a
        vector, or the mention's pieces not found)."""
        live = [r for r in requests if len(r.mention.candidates) > 1]
        vecs = self.vectors([(c, ev) for r in live
                             for c, ev in zip(r.mention.candidates, r.evidence, strict=True)])
        passages: dict[str, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        out: list[list[float] | None] = []
        for req in requests:
            svecs = [vecs.get(_key(c), _NONE) for c in req.mention.candidates]
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
            cos = [float(tv @ v) if v.size else None for v in svecs]
            known = [c for c in cos if c is not None]
            mean = sum(known) / len(known)
            out.append([c if c is not None else mean for c in cos])
        return out
