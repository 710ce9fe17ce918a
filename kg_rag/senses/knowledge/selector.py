"""The knowledge-based sense selector (offline default): sense-order prior + Personalized
PageRank over the concept graph + extended Lesk gloss overlap, combined log-linearly.

For each ambiguous mention:

* **prior** — where the store holds corpus tag counts for the candidates (WordNet's cntlist,
  ``kgr:SenseFrequency``), their smoothed relative frequency (:func:`~kg_rag.senses.knowledge.prior.count_prior`);
  else WordNet's sense order (``kgr:senseRank``, by frequency): ``log p(c) = -alpha * log(rank)``; for another language's lexicon (whose sense order is no
  frequency order) the English frequency of the shared concept, estimated from the dictionary
  (:mod:`kg_rag.senses.knowledge.prior`);
* **PPR** (UKB ``ppr_w2w``, Agirre & Soroa 2009) — PageRank personalised on the candidate
  concepts of the *other* words of the context (each word one unit of teleport mass, split over
  its senses by the same rank prior); the target's own candidates are never seeds. Candidate
  scores are normalised over the candidates;
* **frames** — for English verbs, how well each sense's subcategorisation frames admit what
  follows the mention in the text (object, preposition, clause end, ``to``-infinitive, passive;
  :mod:`kg_rag.senses.knowledge.frames`);
* **part of speech** — raw text gives a word candidates in several parts of speech; the tokens
  around it (determiner before → noun, modal or ``to`` before → verb, …) give each candidate
  ``log P(its part of speech)`` (:mod:`kg_rag.senses.knowledge.pos_context`);
* **Lesk** — IDF-weighted overlap of the context's content-word lemmas (plus, cross-lingually,
  the English lemmas of the context words' concepts) with each candidate's definitions, examples,
  lemmas in all languages, translations and its graph neighbours' glosses.
* **context** — English mentions among English candidates: the cosine of the mention's token
  vector in its passage and each sense's vector in its own definition and examples, from a small
  English encoder (:mod:`~kg_rag.senses.knowledge.contextual`; absent when it is not installed or
  switched off, which gives another agent version).

``score = alpha * log prior + w_ppr * log p_ppr + w_lesk * lesk - w_case * mismatch
+ w_frames * fit + w_pos * log p_pos + w_context * cos``; the scores returned are the softmax of that times the
``sharpness`` of the regime (an inverse temperature fitted for calibration; it never changes the
choice), the confidence is the margin between the two best — calibrated to the dictionary (among WordNet
candidates of a WordNet-scale store, the squared margin). The weights are per regime (English;
outside English with a flat or an English-frequency prior) and, with every other constant, live
in one :class:`~kg_rag.senses.knowledge.config.KnowledgeSelectorConfig`, whose hash is the
agent version.
"""

from __future__ import annotations

import itertools
import logging
import math
import sys
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, cast

import numpy as np

from kg_rag.annotate.candidates import lemma_readings
from kg_rag.cache import LRU
from kg_rag.model import Agent, Candidate, Selection, SelectionRequest
from kg_rag.pipeline.evidence_index import evidence_index
from kg_rag.pipeline.kept_facts import shared_facts
from kg_rag.senses.baselines import sense_order, unresolved
from kg_rag.senses.knowledge import dictionary, discourse
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig, Weights
from kg_rag.senses.knowledge.contextual import ContextualSenses, english
from kg_rag.senses.knowledge.frames import frame_fits
from kg_rag.senses.knowledge.graph import KnowledgeBase, knowledge_base
from kg_rag.senses.knowledge.orthography import case_mismatch
from kg_rag.senses.knowledge.pos_context import pos_evidence
from kg_rag.senses.knowledge.prior import (
    count_prior,
    english_frequencies,
    english_prior,
    informed,
    sense_frequencies,
)
from kg_rag.store import Store
from kg_rag.text import encoder
from kg_rag.text.analyse import gloss_words as words
from kg_rag.text.normalise import base_language, match_key

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Components:
    """The raw signals for one request (one entry per candidate)."""

    ranks: list[int]
    nodes: list[int | None]
    ppr: list[float]
    lesk: list[float]
    has_seeds: bool = False
    en_prior: list[float] | None = None  # non-English mentions: log English-frequency proxy
    counts: list[float] | None = None    # English mentions with corpus counts: log frequency prior
    informed: bool = False               # WordNet-scale candidates (_wordnet_scale)
    case: list[float] | None = None      # 1.0 where the lemma's case contradicts the mention's
    frames: list[float] | None = None    # English verbs: each sense's frame fit (0 … 1)
    pos_fit: list[float] | None = None   # mixed parts of speech: log P(candidate's POS | tokens)
    dictionary: bool = False             # sense-only readings (kg_rag.senses.knowledge.dictionary)
    contextual: list[float] | None = None  # English: cos(mention's token vector, sense vector)

    @property
    def regime(self) -> str:
        """The weights of these signals: "dictionary" for sense-only readings, "xl"/"xl-freq"
        outside English, else "" (English)."""
        if self.dictionary:
            return "dictionary"
        if self.en_prior is not None:
            return "xl-freq" if self.informed else "xl"
        return ""


@dataclass(slots=True)
class _Prepared:
    request: SelectionRequest
    nodes: list[int | None]
    seeds: dict[int, float]
    context: dict[str, float] = field(default_factory=dict)
    #: sense-only readings outside English: the English words the bridge reached (a subset of
    #: ``context``; empty for other requests)
    bridge: dict[str, float] = field(default_factory=dict)
    #: what :meth:`KnowledgeSelector.components` read from ``context`` and ``seeds`` before it
    #: let them go: the Lesk scores, whether there were seeds, the PPR scores of the candidates
    lesk: list[float] = field(default_factory=list)
    has_seeds: bool = False
    ppr: dict[int, float] = field(default_factory=dict)


def _ranks(cands: Sequence[Candidate]) -> list[int]:
    order = sense_order(cands)
    pos = {i: p for p, i in enumerate(order)}
    return [c.rank if c.rank is not None and c.rank > 0 else pos[i] + 1 for i, c in enumerate(cands)]


#: bytes of Lesk signatures a selector keeps (:meth:`KnowledgeSelector._signature`, one per
#: candidate met; ~1.4 kB each, their words shared with the gloss vocabulary): ~23,000. An entry
#: count (50,000 before) let them grow to ~70 MB on the bench's 1 MB text; one dropped is made
#: again from the knowledge base (bench/ANALYSIS.md, issue 17's memory row).
SIGNATURE_BYTES = 32 << 20


def _signature_weight(sig: dict[str, float]) -> int:
    return sys.getsizeof(sig) + 150   # the table (its words are shared), the key, the LRU's slot


@lru_cache(maxsize=100_000)
def _english_words(lemma: str) -> tuple[str, ...]:
    return tuple(words(lemma, "en"))


@lru_cache(maxsize=100_000)
def _evidence_words(text: str, lang: str) -> tuple[str, ...]:
    """The gloss words of one evidence text: the same labels, definitions and translations recur
    in the evidence of many candidates (a concept's texts in each of its senses; 100,234 texts,
    38,589 distinct, when indexing the bench's 30 kB corpus)."""
    return tuple(words(text, lang))


def _foreign(cands: Sequence[Candidate]) -> bool:
    """Senses of another language's lexicon (their sense order is no frequency order)."""
    return not all(c.lang in ("en", "") for c in cands)


def _wordnet_scale(cands: Sequence[Candidate], rich: bool) -> bool:
    """Does the frequency estimate of a WordNet-scale dictionary (``rich``: :func:`informed`)
    speak for these candidates? Only when one of them is a WordNet concept (an ILI id): a small
    thesaurus loaded beside WordNet keeps its own regime — its senses have no corpus frequency,
    and the English words of its labels say nothing about how often its senses are meant."""
    return rich and any(c.ili for c in cands)


def _regime(cands: Sequence[Candidate], rich: bool) -> str:
    """The weights of ``cands`` before their signals are computed (as :attr:`Components.regime`)."""
    if dictionary.sense_only(cands):
        return "dictionary"
    if _foreign(cands):
        return "xl-freq" if _wordnet_scale(cands, rich) else "xl"
    return ""


class KnowledgeSelector:
    """Offline, deterministic; needs the store (for the concept graph and gloss index). Its agent
    version is :meth:`KnowledgeSelectorConfig.version`: a decision recorded with other constants
    or other code is never reused as if this selector had made it."""

    def __init__(self, store: Store, config: KnowledgeSelectorConfig | None = None,
                 context_encoder: bool | None = None) -> None:
        """``context_encoder``: use the contextual signal (:mod:`.contextual`) if the encoder is
        installed (None: the ``context_encoder`` setting, KG_RAG_CONTEXT_ENCODER). Without it
        the config drops the signal, and so has another version: decisions made with and
        without it are never taken for one another."""
        self.store = store
        cfg = config if config is not None else KnowledgeSelectorConfig()
        if context_encoder is None:
            from kg_rag.settings import settings

            context_encoder = settings().context_encoder
        if cfg.context_encoder and (not context_encoder or encoder.folder() is None):
            cfg = cfg.without_context()
        self.config = cfg
        self.agent = Agent(name="knowledge", version=self.config.version())
        self._kb: KnowledgeBase | None = None
        self._signatures: LRU[str, dict[str, float]] = LRU(None, budget=SIGNATURE_BYTES,
                                                           weigh=_signature_weight)
        self._elsewhere: OrderedDict[tuple[str, str, frozenset[str]], dict[str, int]] = OrderedDict()
        self._ctx: ContextualSenses | Literal[False] | None = None

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            self._kb = knowledge_base(self.store)
        return self._kb

    # --- public ------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the concept graph and gloss index now (else the first ``select`` does), and build
        (or open) the store's evidence index (:mod:`kg_rag.pipeline.evidence_index`)."""
        evidence_index(self.store, build=True)
        self.kb.matrix()
        if self.kb.nodes:
            self.kb.lemmas_of(0)  # builds the concept → lemmas index
        english_frequencies(self.kb, self.config.prior)
        for lang in {"en"} | {k.partition(":")[0] for k in self.kb.lemma_keys}:
            words("warming up", lang)  # loads the lemmatiser's dictionary of each language

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        comps = self.components(requests)
        totals = self.scores(requests, comps)
        return [self.decide(req, comp, total)
                for req, comp, total in zip(requests, comps, totals, strict=True)]

    def scores(self, requests: Sequence[SelectionRequest],
               comps: Sequence[Components | None]) -> list[np.ndarray | None]:
        """The log-linear score of every candidate of a batch (one text): each request's own
        signals, then one sense per discourse over the batch (:mod:`.discourse`)."""
        cfg = self.config
        totals: list[np.ndarray | None] = []
        priors: list[np.ndarray | None] = []
        keys: list[tuple[str, ...] | None] = []
        sharp: list[float] = []
        for req, comp in zip(requests, comps, strict=True):
            if comp is None or not req.mention.candidates:
                totals.append(None)
                priors.append(None)
                keys.append(None)
                sharp.append(1.0)
                continue
            w = cfg.weights_of(comp.regime)
            totals.append(combine(comp, w, cfg.ppr_smoothing))
            priors.append(prior_term(comp, w))
            cands = req.mention.candidates
            keys.append(tuple(sorted(c.id for c in cands)) if len(cands) > 1 else None)
            sharp.append(_sharpness(comp, w))
        return discourse.pooled(keys, totals, priors, sharp, cfg.discourse)

    def decide(self, req: SelectionRequest, comp: Components | None,
               total: np.ndarray | None = None) -> Selection:
        cands = req.mention.candidates
        if comp is None or not cands:
            return unresolved(self.agent, "no candidates")
        w = self.config.weights_of(comp.regime)
        if total is None:
            total = combine(comp, w, self.config.ppr_smoothing)
        m = float(total.max())
        p = np.exp(_sharpness(comp, w) * (total - m))
        p /= p.sum()
        best, margin = _choice(cands, total, p, comp.ranks)
        conf = margin ** self.config.margin_power(comp.informed)
        return Selection(
            scores=tuple((c.id, round(float(p[i]), 6)) for i, c in enumerate(cands)),
            chosen=cands[best], confidence=conf, agent=self.agent,
            reason=("prior+ppr+lesk" if comp.has_seeds and w.ppr else "prior+lesk")
            + ("+context" if w.context and comp.contextual is not None else "")
            + ("" if comp.has_seeds else " (no context concepts)"))

    def components(self, requests: Sequence[SelectionRequest]) -> list[Components | None]:
        """The raw signals of every request (PPR batched over all of them).

        A request's prepared state (its context words and PPR seeds: ~40 kB, most of a
        section's memory when it is decided) is read as soon as it is complete and then let go:
        its Lesk scores right after it is prepared, its PPR once :attr:`~KnowledgeSelectorConfig.ppr_batch`
        requests that walk are prepared — the same batches, in the same order, as when every
        request was prepared first, so every score is the same to the last bit."""
        kb, cfg = self.kb, self.config
        prepared: list[_Prepared | None] = []
        memo = _BatchMemo()
        rich = informed(kb, cfg.prior)
        walking: list[_Prepared] = []
        for req in requests:
            if not req.mention.candidates:
                prepared.append(None)
                continue
            one = self._prepare(kb, req, memo)
            one.lesk = self._lesk(kb, one)
            one.context = {}
            one.has_seeds = bool(one.seeds)
            if one.seeds and cfg.weights_of(_regime(req.mention.candidates, rich)).ppr:
                walking.append(one)
                if len(walking) == cfg.ppr_batch:
                    self._walk(kb, walking)
                    walking = []
            else:
                one.seeds = {}
            prepared.append(one)
        if walking:
            self._walk(kb, walking)
        fits = iter(frame_fits(self.store, [p.request for p in prepared if p is not None], cfg.frames))
        freq = sense_frequencies(kb, self.store, (
            c.sense_key for p in prepared if p is not None and not _foreign(p.request.mention.candidates)
            for c in p.request.mention.candidates if c.sense_key)) if cfg.counts else {}
        ctx = self._contextual(prepared, rich)
        out: list[Components | None] = []
        for p, cos in zip(prepared, ctx, strict=True):
            if p is None:
                out.append(None)
                continue
            cands = p.request.mention.candidates
            scores = p.ppr
            big = _wordnet_scale(cands, rich)
            if dictionary.sense_only(cands):
                out.append(Components(
                    ranks=_ranks(cands), nodes=p.nodes, ppr=[0.0] * len(cands), lesk=p.lesk,
                    en_prior=dictionary.richness_prior(p.request.evidence),
                    pos_fit=dictionary.pos_fit(p.request, cfg.pos_cues, self._kinds_elsewhere),
                    dictionary=True, has_seeds=p.has_seeds, contextual=cos))
                continue
            ranks = _ranks(cands)
            out.append(Components(
                ranks=ranks, nodes=p.nodes,
                en_prior=english_prior(kb, p.nodes, cfg.prior, flat=not big) if _foreign(cands) else None,
                counts=count_prior([c.sense_key for c in cands], ranks, freq)
                if freq and not _foreign(cands) else None,
                informed=big,
                ppr=[float(scores.get(n, 0.0)) if n is not None else 0.0 for n in p.nodes],
                lesk=p.lesk,
                case=case_mismatch(p.request.mention, p.request.context, cands), frames=next(fits),
                pos_fit=pos_evidence(p.request, cfg.pos_cues),
                has_seeds=p.has_seeds, contextual=cos))
        return out

    def _walk(self, kb: KnowledgeBase, chunk: Sequence[_Prepared]) -> None:
        """One PPR over the seeds of ``chunk`` (one batch): each request's scores of its own
        candidates' nodes kept, its seeds let go."""
        cfg = self.config
        targets = sorted({n for q in chunk for n in q.nodes if n is not None})
        r = kb.ppr([q.seeds for q in chunk], damping=cfg.damping, iterations=cfg.iterations,
                   targets=targets, hops=cfg.hops)
        for j, q in enumerate(chunk):
            q.ppr = {n: float(r[n][j]) for n in q.nodes if n is not None}
            q.seeds = {}

    def _contextual(self, prepared: Sequence[_Prepared | None], rich: bool) -> list[list[float] | None]:
        """The contextual signal (:mod:`.contextual`) of each request whose regime weighs it:
        in an English passage the token vectors (English candidates, not sense-only readings);
        sense-only readings in a passage in another language through the English words the
        bridge reached; None for the others."""
        ctx = self._context_model()
        if ctx is None:
            return [None] * len(prepared)
        tokens: list[SelectionRequest] = []
        bridged: list[_Prepared] = []
        for p in prepared:
            if p is None:
                continue
            r = p.request
            regime = _regime(r.mention.candidates, rich)
            if not self.config.weights_of(regime).context:
                continue
            in_english = english(r.context_lang or r.mention.lang)
            if regime == "dictionary":
                if not in_english and p.bridge:
                    bridged.append(p)
            elif in_english:
                tokens.append(r)
        got: dict[int, list[float] | None] = {}
        if tokens:
            got.update(zip(map(id, tokens), ctx.cosines(tokens), strict=True))
        if bridged:
            got.update(zip((id(p.request) for p in bridged),
                           ctx.bridge_cosines([p.request for p in bridged], [p.bridge for p in bridged]),
                           strict=True))
        return [got.get(id(p.request)) if p is not None else None for p in prepared]

    def _context_model(self) -> ContextualSenses | None:
        if not self.config.context_encoder:
            return None
        if self._ctx is None:
            enc = encoder.load()
            self._ctx = ContextualSenses(enc, shared_facts(self.store)) if enc is not None else False
        return self._ctx or None

    def _kinds_elsewhere(self, req: SelectionRequest) -> dict[str, int]:
        """Parts of speech (:func:`dictionary.kind`) of the readings of the mention's written form
        in the store's lexicons of its language, the candidates' own entries and senses left
        out: what the other dictionaries and wordnets of the language say the bare form is.
        Cached per form and candidate set."""
        m = req.mention
        own = frozenset(x for c in m.candidates for x in (c.entry, c.sense) if x)
        key = (m.lang or "", match_key(m.text), own)
        hit = self._elsewhere.get(key)
        if hit is None:
            hit = {}
            if key[1]:
                for r in lemma_readings(self.store, key[1], base_language(m.lang)):
                    if r.entry not in own and r.sense not in own:
                        k = dictionary.kind(r.pos)
                        hit[k] = hit.get(k, 0) + 1
            self._elsewhere[key] = hit
            if len(self._elsewhere) > 50_000:
                self._elsewhere.popitem(last=False)
        return hit

    # --- signals -----------------------------------------------------------------------------
    def _seed_word(self, kb: KnowledgeBase, nodes_ranks: list[tuple[int, int]],
                   exclude: set[int]) -> dict[int, float]:
        """PPR seeds of one context word: its concepts by sense rank, but not the mention's own
        candidates (``exclude``) — unless the word has no other reading: a word of the context
        that can only mean one of the candidates names it (Wasserhahn → the tap, for a later
        Hahn), and that is evidence for it."""
        word: dict[int, float] = {}
        only = len({n for n, _ in nodes_ranks}) == 1
        for n, rank in nodes_ranks:
            if n in exclude and not only:
                continue
            word[n] = max(word.get(n, 0.0), float(max(rank, 1)) ** -self.config.seed_alpha)
        tot = sum(word.values())
        return {n: w / tot for n, w in word.items()} if tot > 0 else {}

    def _prepare(self, kb: KnowledgeBase, req: SelectionRequest, memo: _BatchMemo | None = None) -> _Prepared:
        memo = memo if memo is not None else _BatchMemo()
        mention = req.mention
        nodes = [kb.index.get(c.concept) for c in mention.candidates]
        exclude = {n for n in nodes if n is not None}
        own_keys = {memo.key(mention.text)} | {memo.key(c.lemma) for c in mention.candidates if c.lemma}
        lang = req.context_lang or mention.lang
        seeds: dict[int, float] = {}
        context: dict[str, float] = {}
        reached: dict[str, float] = {}
        covered = set(own_keys)
        bridge = lang != "en"
        keep = bridge and dictionary.sense_only(mention.candidates)   # only its regime reads them

        def add_word(seed: _Seed) -> None:
            for n, w in seed.word.items():
                seeds[n] = seeds.get(n, 0.0) + w
            if bridge:  # context words in another language count through their concepts' English lemmas
                for ew, v in memo.bridge_words(self, kb, seed).items():
                    old = context.get(ew, 0.0)
                    context[ew] = v if v > old else old  # max(old, v), without the call
                    if keep:
                        old = reached.get(ew, 0.0)
                        reached[ew] = v if v > old else old

        for other in req.others:
            key = memo.key(other.text)
            if key in own_keys or not other.candidates:
                continue
            entry = memo.other(kb, other.candidates)
            covered.add(key)
            covered.update(entry.lemma_keys)
            add_word(memo.seed_word(self, kb, entry, exclude))
        context_words = memo.words(req.context, lang)
        for w in context_words:
            context[w] = 1.0
        for w in dict.fromkeys(context_words):  # the context's words seed PPR through their concepts
            if w in covered:
                continue
            covered.add(w)
            add_word(memo.seed_word(self, kb, (lang, w), exclude))
        for k in own_keys:
            context.pop(k, None)
            reached.pop(k, None)
        return _Prepared(req, nodes, seeds, context, reached)

    def _signature(self, kb: KnowledgeBase, ev_index: int, p: _Prepared) -> dict[str, float]:
        ev = p.request.evidence[ev_index] if ev_index < len(p.request.evidence) else None
        cand = p.request.mention.candidates[ev_index]
        key = cand.id
        hit = self._signatures.get(key)
        if hit is not None:
            return hit
        w = self.config.neighbour_glosses
        sig: dict[str, float] = {}
        node = p.nodes[ev_index]
        if node is not None and w > 0:
            nbs = kb.neighbours(node)[: self.config.neighbour_limit]
            if len(nbs):
                vocab = kb.vocab
                ptr = kb.gloss_ptr
                ids = np.concatenate([kb.gloss_ids[ptr[nb] : ptr[nb + 1]] for nb in nbs.tolist()])
                sig = dict.fromkeys([vocab[wid] for wid in np.unique(ids).tolist()], w)
        if ev is not None:
            for t in ev.definitions + ev.examples + ev.labels + ev.translations + ev.usage:
                for x in _evidence_words(t.text, t.lang or "en"):
                    sig[x] = 1.0
        elif node is not None:
            for wid in kb.gloss(node).tolist():
                sig[kb.vocab[wid]] = 1.0
        self._signatures.put(key, sig)
        return sig

    def _lesk(self, kb: KnowledgeBase, p: _Prepared) -> list[float]:
        """Each candidate's sum over the context words in its signature of ``cw * sw * idf``.
        Only the words both have are visited (the context has hundreds of words, a signature
        often fewer), and they are summed in the context's order, as a loop over the context
        would: the floating-point sum, and so every score, stays the same to the last bit."""
        context = p.context
        position: dict[str, int] | None = None
        idf = kb.idf
        unseen = math.log(len(kb.nodes) + 1)
        out = []
        for i in range(len(p.request.mention.candidates)):
            sig = self._signature(kb, i, p)
            common = context.keys() & sig.keys()  # set operations of dict views loop over the smaller
            if len(common) > 1:
                if position is None:
                    position = dict(zip(context, itertools.count()))
                hits: Iterable[str] = sorted(common, key=position.__getitem__)
            else:
                hits = common
            total = 0.0
            for wd in hits:
                sw = sig[wd]
                if sw:
                    j = kb.word_index.get(wd)
                    total += context[wd] * sw * (float(idf[j]) if j is not None and idf is not None else unseen)
            out.append(total)
        return out


@dataclass(slots=True)
class _Seed:
    """The PPR seeds of one context word (:meth:`KnowledgeSelector._seed_word`), and what it adds
    to the context of a request in another language (:meth:`_BatchMemo.bridge_words`, made when
    first asked for)."""

    word: dict[int, float]
    bridge: dict[str, float] | None = None


@dataclass(slots=True)
class _Other:
    """What :meth:`KnowledgeSelector._prepare` needs of an other mention's candidates."""

    candidates: tuple[Candidate, ...]
    lemma_keys: tuple[str, ...]
    pairs: list[tuple[int, int]]
    seed: _Seed | None = None


class _BatchMemo:
    """What one :meth:`KnowledgeSelector.components` call computes once for all its requests:
    the mentions of a text are each other's ``others``, so their match keys, seed pairs and the
    context's gloss words recur in every request of the batch."""

    __slots__ = ("_keys", "_others", "_seeds", "_words", "_english")

    def __init__(self) -> None:
        self._keys: dict[str, str] = {}
        self._others: dict[int, _Other] = {}
        self._seeds: dict[tuple[str, str], tuple[list[tuple[int, int]], _Seed]] = {}
        self._words: dict[tuple[str, str], list[str]] = {}
        self._english: dict[int, tuple[str, ...]] = {}

    def other(self, kb: KnowledgeBase, cands: tuple[Candidate, ...]) -> _Other:
        """The entry of an other mention's candidates. Keyed by the tuple's identity: the
        requests of a batch share their mentions' candidate tuples (``dataclasses.replace``
        keeps them), and hashing a tuple of frozen dataclasses hashes every field of every
        candidate each time (2.3 million calls for the bench's 400 documents). The entry keeps
        the tuple alive, so its id is not reused while the memo lives; an equal tuple that is
        another object gets an entry of its own, with the same content."""
        hit = self._others.get(id(cands))
        if hit is None or hit.candidates is not cands:
            pairs = [(kb.index[c.concept], r) for c, r in zip(cands, _ranks(cands), strict=True)
                     if c.concept in kb.index]  # (node, rank) of the candidates that are graph nodes
            hit = self._others[id(cands)] = _Other(
                cands, tuple(self.key(c.lemma) for c in cands if c.lemma), pairs)
        return hit

    def seed_word(self, sel: KnowledgeSelector, kb: KnowledgeBase,
                  word: _Other | tuple[str, str], exclude: set[int]) -> _Seed:
        """:meth:`KnowledgeSelector._seed_word` of a context word — an other mention (its
        entry) or a (language, lemma) of the context — computed once per batch unless one of
        its concepts is a candidate of the request (``exclude``)."""
        if isinstance(word, _Other):
            if word.seed is None:
                word.seed = _Seed(sel._seed_word(kb, word.pairs, set()))
            pairs, full = word.pairs, word.seed
        else:
            hit = self._seeds.get(word)
            if hit is None:
                found = kb.concepts_of(word[0], word[1])
                hit = self._seeds[word] = (found, _Seed(sel._seed_word(kb, found, set())))
            pairs, full = hit
        if exclude.isdisjoint(full.word):
            return full
        return _Seed(sel._seed_word(kb, pairs, exclude))

    def bridge_words(self, sel: KnowledgeSelector, kb: KnowledgeBase, seed: _Seed) -> dict[str, float]:
        """English gloss word → the largest ``bridge * w`` over the seed's concepts whose English
        lemmas have it, in the order the words first come (concept by concept): adding these
        to a context with ``max`` gives the context that adding each concept's words one by one
        gives (``max`` is exact, and a word keeps the place where it first came)."""
        out = seed.bridge
        if out is None:
            out = {}
            factor = sel.config.bridge
            for n, w in seed.word.items():
                v = factor * w
                for ew in self.english_words(kb, n):
                    old = out.get(ew, 0.0)
                    out[ew] = v if v > old else old  # max(old, v), without the call
            seed.bridge = out
        return out

    def key(self, text: str) -> str:
        k = self._keys.get(text)
        if k is None:
            k = self._keys[text] = match_key(text)
        return k

    def words(self, text: str, lang: str) -> list[str]:
        out = self._words.get((text, lang))
        if out is None:
            out = self._words[(text, lang)] = words(text, lang)
        return out

    def english_words(self, kb: KnowledgeBase, node: int) -> tuple[str, ...]:
        """The gloss words of the English lemmas of ``node`` (in order, repeats kept): a fact of
        the knowledge base, kept with it (``kb.cache``) for every later batch."""
        out = self._english.get(node)
        if out is None:
            table = cast(dict[int, tuple[str, ...]], kb.cache.setdefault("english-words", {}))
            out = table.get(node)
            if out is None:
                out = table[node] = tuple(ew for key in kb.lemmas_of(node) if key.startswith("en:")
                                          for ew in _english_words(key[3:]))
            self._english[node] = out
        return out


def _choice(cands: Sequence[Candidate], total: np.ndarray, p: np.ndarray,
            ranks: Sequence[int]) -> tuple[int, float]:
    """The chosen candidate and the margin of its meaning. A meaning is a concept: two senses
    of one concept (the German and the English dictionary's *Bank* → the bank) are one reading,
    so the concept whose candidates hold the most probability is chosen — its best candidate,
    ties to the lower sense rank — and the margin is over the next concept, not over a second
    sense of the same one."""
    mass: dict[str, float] = {}
    for i, c in enumerate(cands):
        mass[c.concept] = mass.get(c.concept, 0.0) + float(p[i])
    top = max(mass.values())
    # among concepts with the top mass (rounded, as totals are), the best candidate's order decides
    tied = {c for c, v in mass.items() if round(v, 9) == round(top, 9)}
    best = min((i for i, c in enumerate(cands) if c.concept in tied),
               key=lambda i: (-round(float(total[i]), 9), ranks[i], i))
    chosen = cands[best].concept
    second = max((v for c, v in mass.items() if c != chosen), default=0.0)
    return best, min(1.0, max(0.0, mass[chosen] - second))


def _sharpness(comp: Components, w: Weights) -> float:
    """The inverse temperature of ``comp``'s probabilities (Weights.sharpness, fitted on
    WordNet-scale decisions): a small dictionary's scores (a thesaurus, the demo) are not
    tempered, as its margins are not squared."""
    return w.sharpness if comp.informed else 1.0


def prior_term(comp: Components, w: Weights) -> np.ndarray:
    """The prior part of :func:`combine`: ``alpha * log prior`` of each candidate."""
    if comp.en_prior is not None:
        # another language's lexicon: its sense order says little (OMW lists senses in synset
        # order, first sense = random here); the English frequency of the shared concept more
        return w.alpha * np.asarray(comp.en_prior, dtype=np.float64)
    if comp.counts is not None:
        return w.alpha * np.asarray(comp.counts, dtype=np.float64)
    return -w.alpha * np.log(np.asarray(comp.ranks, dtype=np.float64))


def combine(comp: Components, w: Weights, smoothing: float) -> np.ndarray:
    """The log-linear score of each candidate (``smoothing``: of the PPR distribution)."""
    total = prior_term(comp, w)
    if comp.has_seeds and w.ppr:
        raw = np.asarray(comp.ppr, dtype=np.float64)
        s = raw.sum()
        n = len(raw)
        p = raw / s if s > 0 else np.full(n, 1.0 / n)
        total += w.ppr * np.log((1 - smoothing) * p + smoothing / n)
    if w.lesk:
        total += w.lesk * np.asarray(comp.lesk, dtype=np.float64)
    if w.case and comp.case is not None:
        total -= w.case * np.asarray(comp.case, dtype=np.float64)
    if w.frames and comp.frames is not None:
        total += w.frames * np.asarray(comp.frames, dtype=np.float64)
    if w.pos and comp.pos_fit is not None:
        total += w.pos * np.asarray(comp.pos_fit, dtype=np.float64)
    if w.context and comp.contextual is not None:
        total += w.context * np.asarray(comp.contextual, dtype=np.float64)
    return total

