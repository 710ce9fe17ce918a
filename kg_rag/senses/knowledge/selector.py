"""The knowledge-based sense selector (offline default): sense-order prior + Personalized
PageRank over the concept graph + extended Lesk gloss overlap, combined log-linearly.

For each ambiguous mention:

* **prior** — WordNet lists an entry's senses by frequency (``kgr:senseRank``):
  ``log p(c) = -alpha * log(rank)``; for another language's lexicon (whose sense order is no
  frequency order) the English frequency of the shared concept, estimated from the dictionary
  (:mod:`kg_rag.senses.knowledge.prior`);
* **PPR** (UKB ``ppr_w2w``, Agirre & Soroa 2009) — PageRank personalised on the candidate
  concepts of the *other* words of the context (each word one unit of teleport mass, split over
  its senses by the same rank prior); the target's own candidates are never seeds. Candidate
  scores are normalised over the candidates, divided by the static PageRank to the power
  ``hub`` (concepts with many relations win every PPR otherwise);
* **frames** — for English verbs, how well each sense's subcategorisation frames admit what
  follows the mention in the text (object, preposition, clause end, ``to``-infinitive, passive;
  :mod:`kg_rag.senses.knowledge.frames`);
* **part of speech** — raw text gives a word candidates in several parts of speech; the tokens
  around it (determiner before → noun, modal or ``to`` before → verb, …) give each candidate
  ``log P(its part of speech)`` (:mod:`kg_rag.senses.knowledge.pos_context`);
* **Lesk** — IDF-weighted overlap of the context's content-word lemmas (plus, cross-lingually,
  the English lemmas of the context words' concepts) with each candidate's definitions, examples,
  lemmas in all languages, translations and its graph neighbours' glosses.

``score = log prior + w_ppr * log p_ppr + w_lesk * lesk + w_frames * fit + w_pos * log p_pos``; the scores returned are the softmax of
that, the confidence is the margin between the two best — calibrated to the dictionary
(:data:`MARGIN_POWER`: among WordNet candidates of a WordNet-scale store, the squared margin). Weights are per part of speech (and
"xl" for mentions outside English) and were chosen on the development sets only (see ``WEIGHTS``
and README "Evaluation").
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from kg_rag.model import Agent, Candidate, Mention, Selection, SelectionRequest
from kg_rag.senses.baselines import sense_order, unresolved
from kg_rag.senses.knowledge.frames import frame_fits
from kg_rag.senses.knowledge.graph import KnowledgeBase, knowledge_base
from kg_rag.senses.knowledge.orthography import case_mismatch, sentence
from kg_rag.senses.knowledge.pos_context import pos_evidence
from kg_rag.senses.knowledge.prior import english_frequencies, english_prior, informed
from kg_rag.store import Store
from kg_rag.text.analyse import gloss_words as words
from kg_rag.text.normalise import match_key

log = logging.getLogger(__name__)

VERSION = "5"
PPR_BATCH = 64
#: PPR on the subgraph within this many edges of the seeds and candidates (None: whole graph)
HOPS: int | None = 2


@dataclass(frozen=True, slots=True)
class Weights:
    alpha: float = 1.0        # rank prior exponent
    ppr: float = 0.3          # weight of log p_ppr
    hub: float = 0.0          # divide PPR by static PageRank ** hub
    lesk: float = 0.01        # weight of the IDF overlap
    neighbours: float = 0.5   # weight of neighbour glosses in a candidate's signature
    own: float = 0.0          # non-English mentions: exponent of their own lexicon's sense rank
    case: float = 100.0       # penalty of a lemma whose case contradicts the mention's (a filter)
    frames: float = 0.0       # weight of an English verb sense's frame fit (0 … 1)
    pos: float = 0.0          # weight of log P(candidate's part of speech | tokens around)


#: Chosen on semeval2007 (455 instances, OEWN 2025, window 1) by a grid over alpha x ppr x hub x
#: lesk: first sense 55.2 F1; PPR alone 40.0, Lesk alone 40.4; this combination 56.3 (2-hop
#: PPR), 56.5 with the case filter; leave-one-document-out over alpha x ppr x lesk 56.3. Per-POS
#: weights gained one or two instances more (nouns 2/0.2/0.12, verbs 2/0.5/0.03) — not used
#: (too few instances to trust). See README "Evaluation".
#: The frame fit (English verbs): weights 3-20 gave 58.9-59.3 (268-270 of 455), 6 chosen;
#: leave-one-document-out 58.9 (268).
#: The part of speech from the tokens around (raw text: candidates in every part of speech, as
#: the annotator gives them): semeval2007 without the corpus' POS 224 of 455 -> 258 with weight
#: 1 (1.5-10: 259; leave-one-document-out 258, every text gains); with the corpus' POS no effect
#: (one POS). Frames also on the verb candidates of such mentions: 264-265, but en-sense-dev
#: retrieval fell (nDCG@10 0.755 against 0.766), so they stay with all-verb mentions.
DEFAULT_WEIGHTS = Weights(alpha=1.0, ppr=0.3, hub=0.0, lesk=0.01, neighbours=0.5, frames=6.0, pos=1.0)
#: Mentions outside English whose dictionary is too small for an English-frequency estimate
#: ("xl": the prior of :mod:`kg_rag.senses.knowledge.prior` is flat, e.g. the demo): the English context
#: weights decide (their scale also sets how sure the decisions are). With OEWN's prior these
#: weights gave 67.6 / 65.5 on semeval2013-dev es / fr (alpha 1-4: 66.9-68.2 / 63.7-65.5).
XL_WEIGHTS = Weights(alpha=2.0, ppr=0.3, lesk=0.01, neighbours=0.5)
#: Mentions outside English when the dictionary is big enough for the English prior to be an
#: estimate ("xl-freq", :func:`kg_rag.senses.knowledge.prior.informed`; OEWN): the prior decides and the
#: gloss overlap breaks near-ties — on semeval2013-dev es / fr the prior with the case filter
#: alone gives 70.3 / 67.3 and the English context weights above 67.6 / 65.5 (context words
#: reach concepts through the OMW lexicons, sparser and noisier than English); this setting
#: 70.9 / 67.3, and its neighbours alike (alpha 2-3, ppr 0-0.1, lesk 0.0033-0.005: 70.9 /
#: 65.5-67.3; leave-one-document-out over 8 settings 70.9 / 67.3, every fold the same choice).
XL_FREQ_WEIGHTS = Weights(alpha=3.0, ppr=0.0, lesk=0.005, neighbours=0.5)
WEIGHTS: dict[str, Weights] = {"": DEFAULT_WEIGHTS, "xl": XL_WEIGHTS, "xl-freq": XL_FREQ_WEIGHTS}

#: What a margin means depends on the dictionary, so the confidence reported is
#: ``margin ** MARGIN_POWER[informed]``. Among WordNet-scale candidates (:func:`_wordnet_scale`:
#: fine-grained senses, a frequency prior) much of a margin
#: is the prior's: on semeval2007 a decision with margin 0.5 was right 68 % of the time, 0.6 81 %
#: (0.2 50 %, 0.4 65 %) — squared, retrieval's "confident" (confidence >= 0.5,
#: :data:`kg_rag.pipeline.ranking_config.CONFIDENT`) starts at a margin of about 0.7, where decisions are right
#: four times in five, and the unsure ones count for each reading by its probability. en-sense-dev
#: nDCG@10 / P@1 with margin thresholds 0.5 / 0.6 / 0.7 / 0.8 / never confident: 0.772 / 0.791 /
#: 0.797 / 0.795 / 0.795 and 0.655 / … / 0.691 (README "Retrieval"). A small dictionary (the demo,
#: a thesaurus with a few entries) has no frequency prior to inflate its margins and no data to
#: calibrate on: its margin is its confidence, as in the paper's examples.
MARGIN_POWER = {False: 1.0, True: 2.0}


@dataclass(slots=True)
class Components:
    """The raw signals for one request (one entry per candidate)."""

    ranks: list[int]
    nodes: list[int | None]
    ppr: list[float]
    static: list[float]
    lesk: list[float]
    pos: str = ""
    has_seeds: bool = False
    en_prior: list[float] | None = None  # non-English mentions: log English-frequency proxy
    informed: bool = False               # WordNet-scale candidates (_wordnet_scale)
    case: list[float] | None = None      # 1.0 where the lemma's case contradicts the mention's
    frames: list[float] | None = None    # English verbs: each sense's frame fit (0 … 1)
    pos_fit: list[float] | None = None   # mixed parts of speech: log P(candidate's POS | tokens)

    @property
    def key(self) -> str:
        """The weights entry of these signals: "xl"/"xl-freq" outside English, else the part of speech."""
        if self.en_prior is not None:
            return "xl-freq" if self.informed else "xl"
        return self.pos


@dataclass(slots=True)
class _Prepared:
    request: SelectionRequest
    nodes: list[int | None]
    seeds: dict[int, float]
    context: dict[str, float] = field(default_factory=dict)


def _ranks(cands: Sequence[Candidate]) -> list[int]:
    order = sense_order(cands)
    pos = {i: p for p, i in enumerate(order)}
    return [c.rank if c.rank is not None and c.rank > 0 else pos[i] + 1 for i, c in enumerate(cands)]


@lru_cache(maxsize=100_000)
def _english_words(lemma: str) -> tuple[str, ...]:
    return tuple(words(lemma, "en"))


def _foreign(cands: Sequence[Candidate]) -> bool:
    """Senses of another language's lexicon (their sense order is no frequency order)."""
    return not all(c.lang in ("en", "") for c in cands)


def _wordnet_scale(cands: Sequence[Candidate], rich: bool) -> bool:
    """Does the frequency estimate of a WordNet-scale dictionary (``rich``: :func:`informed`)
    speak for these candidates? Only when one of them is a WordNet concept (an ILI id): a small
    thesaurus loaded beside WordNet keeps its own regime — its senses have no corpus frequency,
    and the English words of its labels say nothing about how often its senses are meant."""
    return rich and any(c.ili for c in cands)


def _key(cands: Sequence[Candidate], rich: bool) -> str:
    """The weights entry of ``cands`` before their signals are computed (as :attr:`Components.key`)."""
    if _foreign(cands):
        return "xl-freq" if _wordnet_scale(cands, rich) else "xl"
    return _norm_pos(cands)


def _weights(table: dict[str, Weights], key: str) -> Weights:
    """The weights of ``key``; a table without the cross-lingual entries keeps the defaults."""
    w = table.get(key)
    if w is None and key.startswith("xl"):
        w = WEIGHTS[key]
    return w if w is not None else table[""]


def _norm_pos(cands: Sequence[Candidate]) -> str:
    pos = {c.pos for c in cands}
    if len(pos) == 1:
        p = pos.pop() or ""
        return "adjective" if p.startswith("adjective") else p
    return ""


class KnowledgeSelector:
    """Offline, deterministic; needs the store (for the concept graph and gloss index)."""

    agent = Agent(name="knowledge", version=VERSION)

    def __init__(self, store: Store, weights: dict[str, Weights] | None = None,
                 damping: float = 0.85, iterations: int = 20, seed_alpha: float = 1.0,
                 context_words: bool = True, skip: frozenset[str] = frozenset(),
                 context_glosses: float = 0.0, far: float = 1.0, gloss_links: bool = False,
                 hops: int | None = HOPS,
                 kb: KnowledgeBase | None = None) -> None:
        self.store = store
        self.weights = dict(WEIGHTS if weights is None else weights)
        self.damping = damping
        self.iterations = iterations
        self.seed_alpha = seed_alpha
        self.context_words = context_words
        self.skip = skip
        self.context_glosses = context_glosses
        self.far = far
        self.gloss_links = gloss_links
        self.hops = hops
        self._kb = kb
        self._static: np.ndarray | None = None
        self._signatures: OrderedDict[str, dict[str, float]] = OrderedDict()
        # the version names the algorithm AND its parameters: a decision recorded by other
        # weights is never reused as if this selector had made it
        params = repr((sorted(self.weights.items()), damping, iterations, seed_alpha, context_words,
                       sorted(skip), context_glosses, far, gloss_links, hops))
        self.agent = Agent(name="knowledge",
                           version=f"{VERSION}-{hashlib.sha256(params.encode()).hexdigest()[:8]}")

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            self._kb = knowledge_base(self.store)
        return self._kb

    # --- public ------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the concept graph and gloss index now (else the first ``select`` does)."""
        self._static_rank(self.kb)
        if self.kb.nodes:
            self.kb.lemmas_of(0)  # builds the concept → lemmas index
        english_frequencies(self.kb)
        for lang in {"en"} | {k.partition(":")[0] for k in self.kb.lemma_keys}:
            words("warming up", lang)  # loads the lemmatiser's dictionary of each language

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        comps = self.components(requests)
        out = []
        for req, comp in zip(requests, comps, strict=True):
            out.append(self.decide(req, comp))
        return out

    def decide(self, req: SelectionRequest, comp: Components | None,
               weights: dict[str, Weights] | None = None) -> Selection:
        cands = req.mention.candidates
        if comp is None or not cands:
            return unresolved(self.agent, "no candidates")
        w = _weights(weights or self.weights, comp.key)
        total = combine(comp, w)
        m = float(total.max())
        p = np.exp(total - m)
        p /= p.sum()
        # ties go to the lower sense rank
        best = min(range(len(cands)), key=lambda i: (-round(float(total[i]), 9), comp.ranks[i], i))
        second = max((float(p[i]) for i in range(len(cands)) if i != best), default=0.0)
        margin = min(1.0, max(0.0, float(p[best]) - second))
        conf = margin ** MARGIN_POWER[comp.informed]
        return Selection(
            scores=tuple((c.id, round(float(p[i]), 6)) for i, c in enumerate(cands)),
            chosen=cands[best], confidence=conf, agent=self.agent,
            reason=("prior+ppr+lesk" if comp.has_seeds and w.ppr else "prior+lesk")
            + ("" if comp.has_seeds else " (no context concepts)"))

    def components(self, requests: Sequence[SelectionRequest]) -> list[Components | None]:
        """The raw signals of every request (PPR batched over all of them)."""
        kb = self.kb
        prepared: list[_Prepared | None] = []
        for req in requests:
            prepared.append(self._prepare(kb, req) if req.mention.candidates else None)
        rich = informed(kb)
        live = [p for p in prepared if p is not None and p.seeds
                and _weights(self.weights, _key(p.request.mention.candidates, rich)).ppr]
        ppr: dict[int, dict[int, float]] = {}
        for i in range(0, len(live), PPR_BATCH):
            chunk = live[i : i + PPR_BATCH]
            targets = sorted({n for q in chunk for n in q.nodes if n is not None})
            r = kb.ppr([q.seeds for q in chunk], damping=self.damping, iterations=self.iterations,
                       skip=self.skip, targets=targets, hops=self.hops)
            for j, q in enumerate(chunk):
                ppr[id(q)] = {n: float(r[n][j]) for n in q.nodes if n is not None}
        static = self._static_rank(kb)
        fits = iter(frame_fits(self.store, [p.request for p in prepared if p is not None]))
        out: list[Components | None] = []
        for p in prepared:
            if p is None:
                out.append(None)
                continue
            cands = p.request.mention.candidates
            scores = ppr.get(id(p), {})
            big = _wordnet_scale(cands, rich)
            out.append(Components(
                ranks=_ranks(cands), nodes=p.nodes,
                en_prior=english_prior(kb, p.nodes, flat=not big) if _foreign(cands) else None, informed=big,
                ppr=[float(scores.get(n, 0.0)) if n is not None else 0.0 for n in p.nodes],
                static=[float(static[n]) if n is not None else 0.0 for n in p.nodes],
                lesk=self._lesk(kb, p),
                case=case_mismatch(p.request.mention, p.request.context, cands), frames=next(fits),
                pos_fit=pos_evidence(p.request),
                pos=_norm_pos(cands), has_seeds=bool(p.seeds)))
        return out

    # --- signals -----------------------------------------------------------------------------
    def _static_rank(self, kb: KnowledgeBase) -> np.ndarray:
        """Plain PageRank (uniform teleport): how much any PPR favours a concept for its degree."""
        if self._static is None:
            n = max(len(kb.nodes), 1)
            v = np.full(len(kb.nodes), 1.0 / n, dtype=np.float32)
            m = kb.matrix(self.skip)
            r = v.copy()
            for _ in range(self.iterations):
                r = (1 - self.damping) * v + self.damping * (m @ r)
            self._static = r
        return self._static

    def _seed_word(self, kb: KnowledgeBase, nodes_ranks: list[tuple[int, int]],
                   exclude: set[int]) -> dict[int, float]:
        word: dict[int, float] = {}
        for n, rank in nodes_ranks:
            if n in exclude:
                continue
            word[n] = max(word.get(n, 0.0), float(max(rank, 1)) ** -self.seed_alpha)
        tot = sum(word.values())
        return {n: w / tot for n, w in word.items()} if tot > 0 else {}

    def _prepare(self, kb: KnowledgeBase, req: SelectionRequest) -> _Prepared:
        mention = req.mention
        nodes = [kb.index.get(c.concept) for c in mention.candidates]
        exclude = {n for n in nodes if n is not None}
        own_keys = {match_key(mention.text)} | {match_key(c.lemma) for c in mention.candidates if c.lemma}
        lang = req.context_lang or mention.lang
        seeds: dict[int, float] = {}
        context: dict[str, float] = {}
        covered = set(own_keys)
        bridge = lang != "en"

        def add_word(word: dict[int, float]) -> None:
            for n, w in word.items():
                seeds[n] = seeds.get(n, 0.0) + w
                if self.context_glosses:  # extended Lesk: the context words' own glosses
                    for wid in kb.gloss(n).tolist():
                        x = kb.vocab[wid]
                        context[x] = max(context.get(x, 0.0), self.context_glosses * w)
                if bridge:  # context words in another language count through their concepts' English lemmas
                    for key in kb.lemmas_of(n):
                        if key.startswith("en:"):
                            for ew in _english_words(key[3:]):
                                context[ew] = max(context.get(ew, 0.0), 0.5 * w)

        for other in req.others:
            key = match_key(other.text)
            if key in own_keys or not other.candidates:
                continue
            covered.add(key)
            covered.update(match_key(c.lemma) for c in other.candidates if c.lemma)
            pairs = [(kb.index[c.concept], r) for c, r in zip(other.candidates, _ranks(other.candidates), strict=True)
                     if c.concept in kb.index]
            add_word(self._seed_word(kb, pairs, exclude))
        near = sentence(req.context, mention.start, mention.end)
        for w in words(req.context, lang):
            context[w] = max(context.get(w, 0.0), self.far)
        for w in words(near, lang):
            context[w] = 1.0
        if self.context_words:
            for w in dict.fromkeys(words(req.context, lang)):
                if w in covered:
                    continue
                covered.add(w)
                pairs = kb.concepts_of(lang, w)
                if pairs:
                    add_word(self._seed_word(kb, pairs, exclude))
        for k in own_keys:
            context.pop(k, None)
        return _Prepared(req, nodes, seeds, context)

    def _signature(self, kb: KnowledgeBase, ev_index: int, p: _Prepared) -> dict[str, float]:
        ev = p.request.evidence[ev_index] if ev_index < len(p.request.evidence) else None
        cand = p.request.mention.candidates[ev_index]
        key = cand.id
        hit = self._signatures.get(key)
        if hit is not None:
            return hit
        w = self.weights.get(_norm_pos([cand]), self.weights[""]).neighbours
        sig: dict[str, float] = {}
        node = p.nodes[ev_index]
        if node is not None and w > 0:
            near = set(kb.neighbours(node)[:200].tolist())
            if self.gloss_links:
                near |= kb.gloss_links(node)
            for nb in near:
                for wid in kb.gloss(nb).tolist():
                    sig[kb.vocab[wid]] = w
        if ev is not None:
            for t in ev.definitions + ev.examples + ev.labels + ev.translations + ev.usage:
                for x in words(t.text, t.lang or "en"):
                    sig[x] = 1.0
        elif node is not None:
            for wid in kb.gloss(node).tolist():
                sig[kb.vocab[wid]] = 1.0
        self._signatures[key] = sig
        if len(self._signatures) > 50_000:
            self._signatures.popitem(last=False)
        return sig

    def _lesk(self, kb: KnowledgeBase, p: _Prepared) -> list[float]:
        idf = kb.idf
        unseen = math.log(len(kb.nodes) + 1)
        out = []
        for i in range(len(p.request.mention.candidates)):
            sig = self._signature(kb, i, p)
            total = 0.0
            for wd, cw in p.context.items():
                sw = sig.get(wd)
                if sw:
                    j = kb.word_index.get(wd)
                    total += cw * sw * (float(idf[j]) if j is not None and idf is not None else unseen)
            out.append(total)
        return out


def combine(comp: Components, w: Weights) -> np.ndarray:
    """The log-linear score of each candidate."""
    if comp.en_prior is not None:
        # another language's lexicon: its sense order says little (OMW lists senses in synset
        # order, first sense = random here); the English frequency of the shared concept more
        total = w.alpha * np.asarray(comp.en_prior, dtype=np.float64) - w.own * np.log(
            np.asarray(comp.ranks, dtype=np.float64))
    else:
        total = -w.alpha * np.log(np.asarray(comp.ranks, dtype=np.float64))
    if comp.has_seeds and w.ppr:
        raw = np.asarray(comp.ppr, dtype=np.float64)
        if w.hub:
            st = np.asarray(comp.static, dtype=np.float64)
            raw = np.where(st > 0, raw / np.maximum(st, 1e-12) ** w.hub, 0.0)
        s = raw.sum()
        n = len(raw)
        p = raw / s if s > 0 else np.full(n, 1.0 / n)
        total += w.ppr * np.log(0.98 * p + 0.02 / n)
    if w.lesk:
        total += w.lesk * np.asarray(comp.lesk, dtype=np.float64)
    if w.case and comp.case is not None:
        total -= w.case * np.asarray(comp.case, dtype=np.float64)
    if w.frames and comp.frames is not None:
        total += w.frames * np.asarray(comp.frames, dtype=np.float64)
    if w.pos and comp.pos_fit is not None:
        total += w.pos * np.asarray(comp.pos_fit, dtype=np.float64)
    return total


def mention_of(text: str, lang: str, candidates: Sequence[Candidate], start: int = 0) -> Mention:
    """A mention helper for callers without character offsets (evaluation, tests)."""
    return Mention(start=start, end=start + len(text), text=text, lang=lang,
                   candidates=tuple(candidates))
