"""Every parameter of the ranking arithmetic (:mod:`.retrieve`) in one frozen object.

:class:`RetrievalConfig` is what ``rank`` and ``expand`` are given, what ``ask`` records with the
question (a ``kgr:Retrieval`` activity) and what ``explain --document`` replays; its ``version``
hashes every field, so two rankings with the same version ran the same arithmetic. The module
constants are the defaults (tuning notes: README "Retrieval").
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from kg_rag.errors import InputError

#: weight of an expansion relative to the concept it expands, by relation (local name); SKOS
#: mapping relations link concepts of different schemes (a thesaurus to WordNet, one to another)
EXPANSION: Mapping[str, float] = MappingProxyType({
    "broader": 0.5, "narrower": 0.5, "hypernym": 0.5, "hyponym": 0.5,
    "instance_hypernym": 0.5, "instance_hyponym": 0.5,
    "related": 0.3, "similar": 0.3, "also": 0.3,
    "exactMatch": 1.0, "closeMatch": 0.8,
    "broadMatch": 0.5, "narrowMatch": 0.5, "relatedMatch": 0.3})
#: mappings to the same meaning in another scheme: the neighbour stands in for its concept,
#: focus included (other expansions are never the focus)
SAME_MEANING = frozenset({"exactMatch", "closeMatch"})
#: the focus word ranks documents first; the rest of the question breaks ties (en-sense-dev
#: nDCG@10, label matching / knowledge: ×10 0.725 / 0.73, ×100 0.751 / 0.766; README "Retrieval")
FOCUS_BOOST = 100.0
#: how documents meet the query concepts: ``label`` — label matching alone, an annotation counts
#: 1 for every concept among its candidates (``--wsd none``); ``fused`` — label matching plus the
#: expected sense agreement of the question's and the document's decisions (every selector)
MATCH_MODES = ("label", "fused")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """The ranking's parameters; build a variant with :meth:`with_expansion` or
    ``dataclasses.replace``. Invalid values raise :class:`~kg_rag.errors.InputError`."""

    #: (relation local name, weight), sorted by relation; a relation not listed weighs 0
    expansion: tuple[tuple[str, float], ...] = tuple(sorted(EXPANSION.items()))
    same_meaning: tuple[str, ...] = tuple(sorted(SAME_MEANING))
    focus_boost: float = FOCUS_BOOST
    match: str = "fused"

    def __post_init__(self) -> None:
        pairs = dict(self.expansion)
        if len(pairs) != len(self.expansion):
            raise InputError("an expansion relation is listed twice")
        for rel, w in pairs.items():
            if not isinstance(rel, str) or not rel or not _number(w):
                raise InputError(f"expansion weight {rel!r}: {w!r} is not a relation name with a "
                                 f"finite number")
        object.__setattr__(self, "expansion", tuple(sorted((r, float(w)) for r, w in pairs.items())))
        object.__setattr__(self, "same_meaning", tuple(sorted(set(self.same_meaning))))
        for name in ("focus_boost",):
            v = getattr(self, name)
            if not _number(v) or v < 0:
                raise InputError(f"retrieval parameter {name} must be a finite number ≥ 0, not {v!r}")
            object.__setattr__(self, name, float(v))
        if self.match not in MATCH_MODES:
            raise InputError(f"match must be one of {', '.join(MATCH_MODES)}, not {self.match!r}")

    @property
    def weights(self) -> Mapping[str, float]:
        """The expansion weights by relation (read-only)."""
        return MappingProxyType(dict(self.expansion))

    @property
    def version(self) -> str:
        """A short hash of every parameter: equal versions, equal arithmetic."""
        fields = {"expansion": self.expansion, "same_meaning": self.same_meaning,
                  "focus_boost": self.focus_boost, "match": self.match}
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()[:12]

    def with_expansion(self, weights: Mapping[str, float]) -> RetrievalConfig:
        """This config with other expansion weights (``{}``: no expansion): a mapping from
        relations the ranking knows (:data:`EXPANSION`) to weights from 0 to 1 — an expansion
        weighs at most what the concept it expands does (InputError otherwise: a misspelt
        relation would silently expand nothing)."""
        if not isinstance(weights, Mapping):
            raise InputError(f"expansion must map relation names to weights, e.g. "
                             f"{{'broader': 0.5}}, not {type(weights).__name__}")
        unknown = sorted(str(r) for r in weights if r not in EXPANSION)
        if unknown:
            raise InputError(f"unknown expansion relation(s) {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(sorted(EXPANSION))}")
        for rel, w in weights.items():
            if not _number(w) or not 0.0 <= float(w) <= 1.0:
                raise InputError(f"expansion weight {rel!r}: {w!r} is not a number from 0 to 1")
        return replace(self, expansion=tuple(weights.items()))


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


#: the parameters ``ask`` uses unless told otherwise
DEFAULT = RetrievalConfig()
