"""What alignment reads and proposes, as frozen domain objects (IRIs are ``str``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DictSense:
    """One dictionary sense as the aligner sees it."""

    sense: str
    entry: str
    lang: str                                  # the entry's language (of its forms)
    lemma: str                                 # the canonical written form
    keys: frozenset[str]                       # match keys of all the entry's written forms
    pos: str | None = None
    rank: int | None = None
    concept: str | None = None                 # the concept it already has (a wordnet synset)
    #: words of its translation equivalents: language → match keys (they find candidates)
    equivalents: tuple[tuple[str, frozenset[str]], ...] = ()
    #: its synonyms (other senses of its concept, in its own language): evidence only — a
    #: synonym is another word with senses of its own, so it finds no candidates
    synonyms: frozenset[str] = frozenset()
    #: definition, example and note texts: (text, language)
    texts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Label:
    key: str        # match key
    lang: str
    kind: str       # pref | alt | hidden


@dataclass(frozen=True, slots=True)
class ThesaurusConcept:
    concept: str
    labels: tuple[Label, ...]
    texts: tuple[tuple[str, str], ...] = ()    # definitions, scope notes, examples: (text, lang)
    neighbours: tuple[str, ...] = ()           # broader, narrower, related concept IRIs

    def label_languages(self) -> frozenset[str]:
        return frozenset(lb.lang for lb in self.labels)


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why a concept was scored for a sense: every feature, for the record and for review."""

    label: float                  # label agreement over languages (log-odds units)
    gloss: float                  # IDF-weighted cosine of the sense's words and the concept's
    neighbours: int               # neighbour concepts named in the sense's definitions/examples
    agreeing: tuple[str, ...]     # languages whose words match a label of the concept
    disagreeing: tuple[str, ...]  # languages with words and labels that do not match
    match: str                    # best label match kind: exact | lemma | stem


@dataclass(frozen=True, slots=True)
class Proposal:
    """The concept proposed for one sense, with its probability-like score."""

    sense: str
    concept: str
    score: float                  # P(concept | sense) among its candidates and "none of them"
    evidence: Evidence
    entry: str = ""
    lemma: str = ""
    lang: str = ""
    candidates: int = 1           # how many concepts competed
    sense_concept: str | None = None  # the concept the sense already had (closeMatch on accept)


@dataclass(frozen=True, slots=True)
class AlignmentReport:
    """The result of one ``align`` run."""

    run: str                      # IRI of the prov:Activity
    dictionary: str               # graph IRIs
    thesaurus: str
    senses: int                   # senses considered
    with_candidates: int          # senses with at least one candidate concept
    proposals: tuple[Proposal, ...] = field(default_factory=tuple)
    started: str = ""
    ended: str = ""


@dataclass(frozen=True, slots=True)
class AlignmentLink:
    """One record of the alignment graph, as ``kg-rag alignments`` lists it."""

    id: str                       # the short identifier (24 hex digits) that review commands take
    iri: str
    sense: str
    concept: str
    score: float
    status: str                   # proposed | accepted | rejected
    method: str
    dictionary: str
    thesaurus: str
    run: str
    relation: str                 # what accepting states: ontolex:reference or skos:closeMatch
    sense_concept: str | None = None
    lemma: str = ""
    label_evidence: float | None = None
    gloss: float | None = None
    neighbours: int | None = None
    match: str = ""
    candidates: int | None = None
    reviewed: str = ""
