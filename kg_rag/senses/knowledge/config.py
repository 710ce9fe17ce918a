"""Every constant a knowledge-based decision depends on, in one frozen object whose hash is the
selector's agent version.

A decision is stored under an IRI that hashes its agent (:func:`kg_rag.pipeline.record.decision_iri`)
and is reused only by a selector of the same version. :meth:`KnowledgeSelectorConfig.version` hashes
the config's contents *and* the code that computes a decision (:func:`kg_rag.resources.code_digest`
of :data:`CODE`: the files of this package and of :mod:`kg_rag.text`, which tokenises and
lemmatises for it, and the lemmatiser's version), so changing a constant or the algorithm changes the version and no stored decision
is reused across it — there is nothing to bump by hand.

The defaults are the tuned values, chosen on the development sets only; how is told in the
docs/EVALUATION.md ("Knowledge selector: how its constants were chosen"), not here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace

from kg_rag.resources import code_digest


@dataclass(frozen=True, slots=True)
class Weights:
    """The log-linear weights of one regime (:meth:`KnowledgeSelectorConfig.weights_of`)::

        score = alpha * log prior + ppr * log p_ppr + lesk * overlap - case * mismatch
                + frames * fit + pos * log p_pos
    """

    alpha: float = 1.0     # prior exponent (rank prior; outside English: English-frequency prior)
    ppr: float = 0.3       # weight of log p_ppr (0: PPR is not run)
    lesk: float = 0.01     # weight of the IDF-weighted gloss overlap
    case: float = 100.0    # penalty of a lemma whose case contradicts the mention's (a filter)
    frames: float = 0.0    # weight of an English verb sense's frame fit (0 … 1)
    pos: float = 0.0       # weight of log P(candidate's part of speech | tokens around)
    #: weight of cos(mention's token vector, candidate's sense vector) (:mod:`.contextual`)
    context: float = 0.0
    #: inverse temperature of the softmax that turns the score into per-candidate probabilities
    #: (temperature scaling, Guo et al. 2017): it changes the probabilities, never the choice;
    #: applied among WordNet-scale candidates only (it is fitted on them)
    sharpness: float = 1.0


@dataclass(frozen=True, slots=True)
class FrameFit:
    """How well a verb frame admits what follows the mention when it is not the exact frame
    (1 = the frame says exactly this; :func:`kg_rag.senses.knowledge.frames.compatibility`)."""

    pp_generic: float = 0.7       # "Somebody ----s PP" for a given preposition
    pp_intransitive: float = 0.5  # an intransitive frame for a verb + PP (the PP an adjunct)
    pp_object: float = 0.5        # "Somebody ----s something to somebody" for a verb + "to"
    clause_object: float = 0.5    # that-clause ↔ transitive frame; -ing form ↔ transitive frame


@dataclass(frozen=True, slots=True)
class PosCues:
    """Log-odds a context cue adds to a part of speech
    (:func:`kg_rag.senses.knowledge.pos_context.pos_distribution`; set by hand, only their scale
    is tuned, by :attr:`Weights.pos`)."""

    strong: float = 2.0
    medium: float = 1.0
    weak: float = 0.5


@dataclass(frozen=True, slots=True)
class PriorConfig:
    """The English-frequency prior of mentions outside English (:mod:`kg_rag.senses.knowledge.prior`)."""

    #: a lemma's frequency is split over its senses by ``rank ** -xl_rank`` (steep Zipf decay)
    xl_rank: float = 3.0
    #: glossed concepts below which gloss counts are no frequency estimate (OEWN: 120,000)
    min_corpus: int = 10_000
    #: added to every concept's frequency before the log (an unknown concept: ``log unknown``)
    unknown: float = 0.1


@dataclass(frozen=True, slots=True)
class KnowledgeSelectorConfig:
    """The knowledge-based selector's constants (defaults: the tuned values)."""

    #: English mentions (any part of speech)
    #: sharpness 0.4: fitted by maximum likelihood of the gold senses on semeval2007 with the
    #: corpus-count prior (in-sample 0.40; leave-one-document-out folds 0.40, 0.40, 0.45): NLL
    #: 1.66 → 1.34, ECE 0.148 → 0.090; choices unchanged (docs/EVALUATION.md, "A corpus-frequency prior")
    #: context 23: fitted by maximum likelihood of the gold senses on semeval2007, the other
    #: constants fixed (NLL 1.384 → 1.315; leave-one-document-out folds 20, 25, 25: 240 → 268
    #: of 431 ambiguous instances right); the sharpness stays the likelihood's best
    #: (docs/EVALUATION.md, "The contextual signal")
    english: Weights = Weights(frames=6.0, pos=1.0, sharpness=0.4, context=23.0)
    #: mentions outside English whose dictionary is too small for an English-frequency estimate
    #: (the prior is flat, e.g. the demo): the English context weights decide
    xl: Weights = Weights(alpha=2.0)
    #: mentions outside English with a WordNet-scale dictionary (an English-frequency estimate):
    #: the prior decides, the gloss overlap breaks near-ties
    #: sharpness 0.25: fitted by maximum likelihood of the gold senses on semeval2013-dev es + fr
    #: (in-sample 0.248; leave-one-document-out folds 0.227-0.263): alpha 3 ranks well but its
    #: softmax claimed >= 0.9 for 207 of 316 decisions, 76 % of them right (README, Calibration)
    xl_freq: Weights = Weights(alpha=3.0, ppr=0.0, lesk=0.005, sharpness=0.25)
    #: readings of a dictionary whose senses point at no concept (no graph, no sense order:
    #: :mod:`kg_rag.senses.knowledge.dictionary`): the prior is the length of a sense's entry,
    #: the part of speech from the word's affixes and neighbours; chosen on hebrew-homographs-dev
    #: (README, Evaluation: alpha 0.5/1/2, pos 1/2, lesk 0/0.03/0.1/0.3); context 3: the passage's
    #: English bridge words against each sense's labels and definitions (:mod:`.contextual`),
    #: chosen by leave-one-lemma-out accuracy on the same set (3 in 91 of 97 folds; the
    #: likelihood's choice would be 6; docs/EVALUATION.md)
    dictionary: Weights = Weights(alpha=1.0, ppr=0.0, lesk=0.1, pos=2.0, context=3.0)
    #: the encoder and recipe of the contextual signal (:mod:`kg_rag.senses.knowledge.contextual`);
    #: "" when it is not used (:meth:`without_context`)
    context_encoder: str = "all-MiniLM-L6-v2"
    #: English prior from corpus tag counts (WordNet's cntlist, ``kgr:SenseFrequency``) where the
    #: store holds them for a mention's candidates (:func:`kg_rag.senses.knowledge.prior.count_prior`);
    #: else, and when off, the rank prior (docs/EVALUATION.md, "A corpus-frequency prior")
    counts: bool = True
    #: one sense per discourse: concentration of a text's sense distribution around the global
    #: prior, in mentions (:mod:`kg_rag.senses.knowledge.discourse`; 0: each mention decided
    #: alone). 1 — the global prior weighs as much as one other mention — was set, not fitted:
    #: 0.1 / 0.3 / 1 / 3 give 2,067–2,072 of 3,085 on hebrew-homographs-dev (0: 2,035)
    discourse: float = 1.0
    #: PageRank damping (probability of following an edge rather than teleporting to the seeds)
    damping: float = 0.85
    #: power iterations of (personalised) PageRank
    iterations: int = 20
    #: PPR on the subgraph within this many edges of the seeds and candidates (None: whole graph)
    hops: int | None = 2
    #: mentions whose PPR runs in one batch; the local subgraph is that of the whole batch, so the
    #: batch size is part of the result
    ppr_batch: int = 64
    #: PPR on the smoothed candidate distribution ``(1 - ppr_smoothing) * p + ppr_smoothing / n``
    ppr_smoothing: float = 0.02
    #: a context word's teleport mass is split over its senses by ``rank ** -seed_alpha``
    seed_alpha: float = 1.0
    #: weight of the graph neighbours' gloss words in a candidate's signature (a candidate's own
    #: definitions, examples, labels and translations weigh 1)
    neighbour_glosses: float = 0.5
    #: graph neighbours of a candidate whose glosses enter its signature
    neighbour_limit: int = 200
    #: outside English: weight of the English lemmas of the context words' concepts in the context
    bridge: float = 0.5
    #: confidence = margin ** margin_power: ``small`` for a small dictionary (its margin is its
    #: confidence), ``wordnet`` among WordNet-scale candidates (much of a margin is the prior's)
    margin_power_small: float = 1.0
    margin_power_wordnet: float = 2.0
    frames: FrameFit = field(default_factory=FrameFit)
    pos_cues: PosCues = field(default_factory=PosCues)
    prior: PriorConfig = field(default_factory=PriorConfig)

    def weights_of(self, regime: str) -> Weights:
        """The weights of ``regime``: ``"xl"``, ``"xl-freq"``, ``"dictionary"``, anything else English."""
        if regime == "xl":
            return self.xl
        if regime == "xl-freq":
            return self.xl_freq
        if regime == "dictionary":
            return self.dictionary
        return self.english

    def without_context(self) -> KnowledgeSelectorConfig:
        """These constants without the contextual signal (the encoder is not installed, or it
        is switched off): another version."""
        return replace(self, context_encoder="", english=replace(self.english, context=0.0),
                       xl=replace(self.xl, context=0.0), xl_freq=replace(self.xl_freq, context=0.0),
                       dictionary=replace(self.dictionary, context=0.0))

    def margin_power(self, wordnet_scale: bool) -> float:
        return self.margin_power_wordnet if wordnet_scale else self.margin_power_small

    def canonical(self) -> str:
        """The contents as canonical JSON (sorted keys): what :meth:`version` hashes."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    def version(self) -> str:
        """The agent version: 10 hex digits of sha256 over :meth:`canonical` and :func:`code_digest`."""
        h = hashlib.sha256(self.canonical().encode())
        h.update(b"\x1e" + code_digest(CODE).encode())
        return h.hexdigest()[:10]


#: the packages whose code computes a knowledge-based decision (any edit there — a comment too —
#: gives a new agent version: stored decisions are then decided again, never reused by a
#: different algorithm)
CODE = ("kg_rag.senses.knowledge", "kg_rag.text")

