"""Verb subcategorisation frames as sense evidence (WordNet "Somebody ----s something").

A WordNet verb sense lists the frames it occurs in (``kgr:subcat`` → ``synsem:SyntacticFrame``
with an ``rdfs:label``, loaded from WN-LMF ``subcat``). The text around a verb mention shows, from
the tokens alone (no tagger: the annotator has none), what follows it: nothing (the clause ends),
an object, a preposition (which one), ``to`` + infinitive, a ``that``-clause, an ``-ing`` form; and
whether it is a passive participle (``be``/``get`` + participle, or participle + ``by``).
:func:`compatibility` is how well a sense's frames admit that pattern, 0 … 1 (the partial matches
weighed by a :class:`~kg_rag.senses.knowledge.config.FrameFit`); the knowledge selector adds
``w.frames`` times it to English verb candidates.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pyoxigraph import NamedNode

from kg_rag.derived import Derived, Slot, Table
from kg_rag.model import Candidate, SelectionRequest
from kg_rag.senses.knowledge.config import FrameFit
from kg_rag.store import Store, Values
from kg_rag.text import english
from kg_rag.text.english import DETERMINERS, OBJECT_PRONOUNS, PREPOSITIONS, QUOTES, skippable

log = logging.getLogger(__name__)

BATCH = 400
CACHE_SIZE = 50_000

_BE = frozenset("be is are was were been being 's 're 'm am get gets got gotten getting "
                "become became becomes".split())
_CLAUSE_END = frozenset("and or but because if when while although though unless whereas where "
                        "as so".split())
_NOT_GERUNDS = frozenset("thing nothing something anything everything morning evening king ring "
                         "spring string building during bring sing swing wing sting ceiling".split())
_WH = frozenset("whether how what why who whom".split())


@dataclass(frozen=True, slots=True)
class Pattern:
    """What follows a verb mention: ``end``, ``obj``, ``pp:<preposition>``, ``toinf``, ``that``,
    ``ger``; ``passive`` when it is a participle after be/get (or before "by")."""

    complement: str
    passive: bool = False


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame label reduced to its complement: ``end``, ``adj``, ``pp:*``, ``pp:<preposition>``,
    ``toinf``, ``inf``, ``that``, ``ger`` or ``obj`` (``extra``: what follows the object —
    a preposition, ``pp``, ``to-inf``, ``inf`` …)."""

    complement: str
    extra: str = ""


def parse_frame(label: str) -> Frame:
    """``"Somebody ----s something to somebody"`` → ``Frame("obj", "to")``."""
    words = label.split()
    verb = next((i for i, w in enumerate(words) if w.startswith("----")), len(words) - 1)
    rest = words[verb + 1 :]
    if not rest:
        return Frame("end")
    head = rest[0]
    low = head.lower()
    if low in ("somebody", "something"):
        tail = [w.lower() for w in rest[1:]]
        if not tail or tail[0] in ("somebody", "something"):
            return Frame("obj")
        if tail[0] == "to" and tail[1:2] == ["infinitive"]:
            return Frame("obj", "to-inf")
        if tail[0].startswith("adjective"):
            return Frame("obj", "adj")
        return Frame("obj", tail[0])
    if low == "pp":
        return Frame("pp:*")
    if low.startswith("adjective"):
        return Frame("adj")
    if low == "infinitive":
        return Frame("inf")
    if low == "to" and len(rest) > 1 and rest[1].lower() == "infinitive":
        return Frame("toinf")
    if low in ("that", "whether"):
        return Frame("that")
    if low.startswith("verb-ing") or low.startswith("v-ing"):
        return Frame("ger")
    if low in PREPOSITIONS or low == "to":
        return Frame(f"pp:{low}")
    log.debug("unrecognised frame label %r: treated as transitive", label)
    return Frame("obj")


def observe(context: str, start: int, end: int, lemma: str) -> Pattern:
    """The pattern around the verb at ``context[start:end]`` whose lemma is ``lemma``."""
    right = english.after(context, end, 8)
    left = english.before(context, start, 4)
    i = 0
    while i < len(right) and (skippable(right[i]) or right[i] in QUOTES):
        i += 1
    r1 = right[i] if i < len(right) else ""
    r2 = right[i + 1] if i + 1 < len(right) else ""
    j = len(left) - 1
    while j >= 0 and skippable(left[j]):
        j -= 1
    before = left[j] if j >= 0 else ""
    words = context[start:end].lower().split()
    surface = words[0] if words else ""
    base = lemma.lower().replace("_", " ").split()
    participle = bool(base) and surface != base[0] and not surface.endswith(("ing", "s"))
    passive = participle and (before in _BE or r1 == "by")
    if not r1 or not r1[0].isalnum() or r1 in _CLAUSE_END:
        comp = "end"
    elif r1 == "to":
        np_follows = (not r2 or not r2[0].isalpha() or r2 in DETERMINERS or r2 in OBJECT_PRONOUNS)
        comp = "pp:to" if np_follows else "toinf"
    elif r1 == "that":
        comp = "obj" if not r2 or not r2[0].isalnum() else "that"
    elif r1 in _WH:
        comp = "that"
    elif r1 in PREPOSITIONS:
        comp = f"pp:{r1}"
    elif r1.endswith("ing") and len(r1) > 5 and r1 not in _NOT_GERUNDS:
        comp = "ger"
    else:
        comp = "obj"
    return Pattern(comp, passive)


def _match(p: Pattern, f: Frame, fit: FrameFit) -> float:
    c = p.complement
    if p.passive:
        return 1.0 if f.complement == "obj" else 0.0
    if c == "end":
        return 1.0 if f.complement == "end" else 0.0
    if c == "obj":
        return 1.0 if f.complement in ("obj", "adj") else (fit.clause_object if f.complement == "that" else 0.0)
    if c.startswith("pp:"):
        if f.complement == c:
            return 1.0
        if f.complement == "pp:*":
            return fit.pp_generic
        if f.complement == "end":
            return fit.pp_intransitive
        return fit.pp_object if f.complement == "obj" and f.extra == c[3:] else 0.0
    if c == "toinf":
        return {"toinf": 1.0, "pp:*": fit.pp_generic, "end": fit.pp_intransitive}.get(f.complement, 0.0)
    if c == "that":
        return 1.0 if f.complement == "that" else (fit.clause_object if f.complement == "obj" else 0.0)
    if c == "ger":
        return 1.0 if f.complement == "ger" else (fit.clause_object if f.complement == "obj" else 0.0)
    return 0.0


def compatibility(p: Pattern, frames: Sequence[Frame], fit: FrameFit) -> float:
    """How well the best of a sense's frames admits the observed pattern (0 without frames)."""
    return max((_match(p, f, fit) for f in frames), default=0.0)


#: sense IRI → its frames, and whether the store has any, in the store's registry
FRAMES: Table[str, tuple[Frame, ...]] = Table("sense-frames", CACHE_SIZE)
HAS_FRAMES: Slot[bool] = Slot("has-frames")


def has_frames(store: Store, wordnet: bool = False) -> bool:
    """Whether any lexicon in the store has frames (asked once per store). A store whose Open
    English WordNet was loaded before the loader kept frames has none: it is worth reloading —
    said once when ``wordnet`` (the candidates carry WordNet sense keys)."""
    asked = []

    def ask() -> bool:
        asked.append(True)
        return store.ask("ask-store-has-frames")

    known = Derived.of(store).value(HAS_FRAMES, ask)
    if asked and not known and wordnet:
        log.warning("no verb frames in this store (its WordNet was loaded before kg-rag kept "
                    "them): reload it with `kg-rag load` for better English verb senses")
    return known


def sense_frames(store: Store, senses: Sequence[str]) -> dict[str, tuple[Frame, ...]]:
    """The frames of each sense IRI (batched ``select-sense-frames``, cached in the store's registry)."""
    cache = Derived.of(store).table(FRAMES)
    out, missing = cache.split(senses)
    for i in range(0, len(missing), BATCH):
        chunk = missing[i : i + BATCH]
        found: dict[str, dict[Frame, None]] = {s: {} for s in chunk}
        rows = store.select("select-sense-frames",
                            values=Values.column("sense", [NamedNode(s) for s in chunk]))
        for r in rows:
            found[r["sense"].value].setdefault(parse_frame(r["label"].value), None)
        for s, fs in found.items():
            out[s] = tuple(fs)
            cache.put(s, out[s])
    return out


def _english_verbs(cands: Sequence[Candidate]) -> bool:
    return bool(cands) and all(c.pos == "verb" and c.lang in ("en", "") and c.sense for c in cands)


def frame_fits(store: Store, requests: Sequence[SelectionRequest], fit: FrameFit) -> list[list[float] | None]:
    """Per request, each candidate's :func:`compatibility`; None unless every candidate is an
    English verb sense and at least one of them has frames."""
    verbs = [r for r in requests if _english_verbs(r.mention.candidates)]
    if not verbs or not has_frames(store, any(c.sense_key for r in verbs for c in r.mention.candidates)):
        return [None] * len(requests)
    frames = sense_frames(store, [c.sense for r in verbs for c in r.mention.candidates if c.sense])
    out: list[list[float] | None] = []
    for r in requests:
        cands = r.mention.candidates
        if not _english_verbs(cands) or not any(frames.get(c.sense or "") for c in cands):
            out.append(None)
            continue
        p = observe(r.context, r.mention.start, r.mention.end, cands[0].lemma or r.mention.text)
        out.append([compatibility(p, frames.get(c.sense or "", ()), fit) for c in cands])
    return out
