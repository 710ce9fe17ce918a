"""Domain objects. RDF terms are converted to these at the store boundary; IRIs are ``str``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kg_rag.senses.mode import WsdMode


@dataclass(frozen=True, slots=True)
class LangText:
    text: str
    lang: str  # BCP 47 base language, "" when unknown


@dataclass(frozen=True, slots=True)
class Candidate:
    """One reading of a mention: a concept, reached through a dictionary sense or a label."""

    concept: str                  # IRI of the skos:Concept / ontolex:LexicalConcept
    sense: str | None = None      # IRI of the ontolex:LexicalSense (None: thesaurus label match)
    entry: str | None = None      # IRI of the ontolex:LexicalEntry
    lemma: str = ""               # the written form or label that matched
    lang: str = ""
    rank: int | None = None       # sense order within its entry (1 = most frequent)
    sense_key: str | None = None  # WordNet sense key, e.g. bank%1:17:01::
    ili: str | None = None        # Interlingual Index id, e.g. i35545
    pos: str | None = None        # lexinfo local name: noun, verb, adjective, adverb, ...
    matched_by: str = "label"     # how the text reached it: label, lemma, prefix:ה, mwe, ...
    scheme: str | None = None     # the concept's skos:inScheme, else the source graph holding it
    scheme_source: str | None = None  # IRI of the source graph holding the concept
    scheme_name: str = ""         # that source's name as `kg-rag sources` lists it, without suffix
    source: str | None = None     # IRI of the source graph holding the sense (else the concept)

    @property
    def id(self) -> str:
        """The identity a selector chooses: the sense if there is one, else the concept."""
        return self.sense or self.concept


@dataclass(frozen=True, slots=True)
class Mention:
    start: int                    # character offsets into the annotated text (NFC)
    end: int
    text: str                     # the surface form, text[start:end]
    lang: str
    candidates: tuple[Candidate, ...]
    fixed_phrase: bool = False    # a multiword expression matched as a whole
    #: concepts of different schemes that are one meaning (skos:exactMatch/closeMatch between
    #: them, DATA-MODEL.md "Several schemes"), each group of two or more; () when none
    same_meaning: tuple[tuple[str, ...], ...] = ()

    @property
    def concepts(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for c in self.candidates:
            seen.setdefault(c.concept, None)
        return tuple(seen)

    @property
    def readings(self) -> int:
        """How many meanings the candidates have: concepts, with each same-meaning group one."""
        grouped = {c for g in self.same_meaning for c in g}
        return len(self.same_meaning) + sum(1 for c in self.concepts if c not in grouped)

    @property
    def ambiguous(self) -> bool:
        return self.readings > 1


@dataclass(frozen=True, slots=True)
class SenseEvidence:
    """What the store knows about one candidate (fetched by SPARQL)."""

    candidate: Candidate
    definitions: tuple[LangText, ...] = ()
    examples: tuple[LangText, ...] = ()
    labels: tuple[LangText, ...] = ()        # concept labels and lemmas, all languages
    translations: tuple[LangText, ...] = ()  # vartrans translation equivalents
    usage: tuple[LangText, ...] = ()         # register / usage notes
    broader: tuple[LangText, ...] = ()       # preferred labels of the concept's broader concepts
    schemes: tuple[LangText, ...] = ()       # labels of the concept's scheme (skos:inScheme)


@dataclass(frozen=True, slots=True)
class SelectionRequest:
    """One ambiguous mention to decide, with everything a selector may use."""

    mention: Mention
    context: str                                 # sentence / passage around the mention
    context_lang: str
    evidence: tuple[SenseEvidence, ...]          # one per candidate, same order as mention.candidates
    others: tuple[Mention, ...] = ()             # the other mentions of the same text
    target_lang: str | None = None               # language of the documents searched, if known


@dataclass(frozen=True, slots=True)
class Agent:
    """The selector as a prov:SoftwareAgent."""

    name: str                     # knowledge, llm, first-sense, random, label
    version: str
    model: str | None = None      # LLM model name
    endpoint_host: str | None = None


@dataclass(frozen=True, slots=True)
class LlmTrace:
    template: str                 # prompt template name and version, e.g. wsd-v1
    prompt_sha256: str
    tokens_in: int
    tokens_out: int
    latency_ms: float
    rationale: str = ""
    requests: int = 1             # HTTP requests the tokens cover (2: an invalid answer and its retry)


@dataclass(frozen=True, slots=True)
class Selection:
    """A selector's answer for one request."""

    scores: tuple[tuple[str, float], ...]   # candidate id (sense or concept IRI) → score
    chosen: Candidate | None                # None: unresolved
    confidence: float
    agent: Agent
    reason: str = ""                        # why unresolved, or a short note
    llm: LlmTrace | None = None

    @property
    def resolved(self) -> bool:
        return self.chosen is not None


@dataclass(frozen=True, slots=True)
class MentionReport:
    mention: Mention
    selection: Selection | None             # None when unambiguous or --wsd none
    decision: str | None                    # IRI of the kgr:SenseSelection
    annotation: str | None                  # IRI of the oa:Annotation
    reused: bool = False


@dataclass(frozen=True, slots=True)
class MatchedConcept:
    iri: str
    label: str
    weight: float


@dataclass(frozen=True, slots=True)
class Contribution:
    """What one concept of a document added to its score; a result's score is the sum of its
    contributions' ``counted`` = ``expansion_weight`` × ``focus_factor`` × ``idf`` ×
    (``question_weight`` × ``document_weight`` + ``question_probability`` ×
    ``document_agreement``): label matching plus expected sense agreement."""

    question_concept: str         # the question's concept (expanded from, when relation is set)
    document_concept: str         # the concept of the document's annotations
    relation: str | None          # IRI of the expansion relation; None: the same concept
    question_weight: float        # label matching: 1/n over the question mention's n candidate concepts
    question_probability: float   # the question's decision's probability of question_concept (0: label matching)
    expansion_weight: float       # the relation's weight (1 for the same concept)
    focus_factor: float           # the focus boost, or 1
    idf: float                    # rarity: ln(1 + documents / documents with the concept)
    document_weight: float        # the document's annotations with the concept, 1 each (1 + ln above 1)
    document_agreement: float     # the same annotations, each by its decision's probability of the concept
    annotations: int              # the document's annotations with the concept among their candidates
    counted: float


@dataclass(frozen=True, slots=True)
class Result:
    doc_id: str
    doc_iri: str
    score: float
    lang: str
    title: str
    passage: str
    passage_start: int                               # offset of the passage in the document
    highlights: tuple[tuple[int, int], ...] = ()     # mention offsets within the passage
    concepts: tuple[MatchedConcept, ...] = ()
    decisions: tuple[str, ...] = ()
    contributions: tuple[Contribution, ...] = ()     # what the score sums, in summation order
    #: in [0, 1]: the expected share of the question's words whose meaning the document shares
    #: (kg_rag.pipeline.relevance); ``score`` orders the results, its size means nothing alone
    relevance: float = 0.0


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """The language a question was taken to be in, and how that was decided.

    ``source``: ``given`` (the caller named it), ``script`` (Hebrew or Arabic letters),
    ``detected`` (the language identifier was sure), ``labels`` (a short text: its words are
    labels in ``langs`` of the store's languages — with several, the readings of each are tried
    and the mention's candidates carry their language), ``default`` (too short to tell and no
    word is a label in any of the store's languages)."""

    lang: str                     # the language the question is recorded in (its readings first)
    source: str
    langs: tuple[str, ...] = ()   # every language whose readings were used, ``lang`` first

    def note(self) -> str:
        """One line for people: which language was assumed, and why."""
        if self.source == "given":
            return f"{self.lang} (given)"
        if self.source == "script":
            return f"{self.lang} (from its script)"
        if self.source == "detected":
            return f"{self.lang} (detected)"
        if self.source == "labels" and len(self.langs) > 1:
            return (f"{' or '.join(self.langs)} (assumed: its words are labels in each of these "
                    f"languages of the store; the readings of all are candidates)")
        if self.source == "labels":
            return f"{self.lang} (assumed: its words are labels in {self.lang} in this store)"
        return (f"{self.lang} (assumed: too short to tell, and none of its words is a label in "
                f"this store; give the language to be sure)")


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    question_iri: str
    lang: str
    mentions: tuple[MentionReport, ...]
    results: tuple[Result, ...]
    wsd: WsdMode
    llm_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    #: how ``lang`` was decided (None: not reported, e.g. an Answer built by hand)
    language: LanguageGuess | None = None
    #: why ``results`` is empty ("" when there are results): no known concept in the question
    #: (then nothing was recorded and ``question_iri`` is ""), or no document matches
    reason: str = ""
