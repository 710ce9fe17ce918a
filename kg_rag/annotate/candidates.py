"""From matched owners (lexical entries, concepts) to :class:`~kg_rag.model.Candidate` readings.

One query per batch (``sparql/select-candidates.rq``, VALUES over the owner IRIs); for a lemma
(the WSD evaluation, ``LexiconAnnotator.candidates_for_lemma``) the rows of
``sparql/select-lemma-candidates.rq`` — on an embedded store read from the lemma index
(:mod:`kg_rag.pipeline.evidence_index`, the same query run once for every key), else queried.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass

from pyoxigraph import Literal, NamedNode

from kg_rag.errors import InputError
from kg_rag.model import Candidate
from kg_rag.namespaces import ILI, LEXINFO
from kg_rag.pipeline.evidence_index import lemma_index
from kg_rag.store import Store, Values
from kg_rag.store.base import Row

#: part-of-speech hints users and corpora give → lexinfo local names
POS_ALIASES = {
    "n": "noun", "noun": "noun", "nn": "noun", "propn": "properNoun", "propernoun": "properNoun",
    "v": "verb", "verb": "verb",
    "a": "adjective", "s": "adjective", "adj": "adjective", "adjective": "adjective",
    "r": "adverb", "adv": "adverb", "adverb": "adverb",
}
_LEXINFO = str(LEXINFO)
_ILI = str(ILI)
#: how many owner IRIs go into one VALUES block (a text with more is sent in a few queries)
BATCH = 5000


def check_pos(pos: str | None) -> str | None:
    """A part-of-speech hint as a lexinfo local name (``"NOUN"``, ``"n"`` → ``"noun"``)."""
    if pos is None or pos == "":
        return None
    name = POS_ALIASES.get(pos.strip().lower().replace("_", ""))
    if name is None:
        raise InputError(f"unknown part of speech {pos!r}; use one of noun, verb, adjective, adverb "
                         f"(or n, v, a, r, NOUN, VERB, ADJ, ADV)")
    return name


@dataclass(frozen=True, slots=True)
class Reading:
    """One row of a candidate query, before the matched text and its analysis are known."""

    concept: str
    sense: str | None
    entry: str | None
    lemma: str
    rank: int | None
    sense_key: str | None
    ili: str | None
    pos: str | None

    def candidate(self, lang: str, matched_by: str, lemma: str = "") -> Candidate:
        return Candidate(concept=self.concept, sense=self.sense, entry=self.entry,
                         lemma=self.lemma or lemma, lang=lang, rank=self.rank,
                         sense_key=self.sense_key, ili=self.ili, pos=self.pos,
                         matched_by=matched_by)


def _pos_name(v: str | None) -> str | None:
    if v is None:
        return None
    return v[len(_LEXINFO):] if v.startswith(_LEXINFO) else v.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        return None


def _ili_of(concept: str) -> str | None:
    """WordNet synsets with an ILI id are the ILI node itself (DATA-MODEL.md)."""
    return concept[len(_ILI):] if concept.startswith(_ILI) else None


def _value(row: Row, name: str) -> str | None:
    t = row.get(name)
    return t.value if t is not None else None


def _reading(row: Row, entry: str | None) -> Reading:
    return _reading_of(row["concept"].value, _value(row, "sense"), entry, _value(row, "lemma"),
                       _value(row, "rank"), _value(row, "senseKey"), _value(row, "pos"))


def _reading_of(concept: str, sense: str | None, entry: str | None, lemma: str | None,
                rank: str | None, sense_key: str | None, pos: str | None) -> Reading:
    """A reading from the values of one row (None: unbound)."""
    return Reading(
        concept=concept,
        sense=sense,
        entry=entry if sense is not None else None,
        lemma=lemma if lemma is not None else "",
        rank=_int(rank),
        sense_key=sense_key,
        ili=_ili_of(concept),
        pos=_pos_name(pos),
    )


def sort_key(c: Candidate | Reading) -> tuple[int, str, int, str]:
    """By entry (thesaurus label matches after dictionary senses), then sense rank, then IRI."""
    return (c.entry is None, c.entry or "", c.rank if c.rank is not None else 1 << 30,
            c.sense or c.concept)


def _dedupe(readings: Iterable[Reading]) -> tuple[Reading, ...]:
    seen: dict[tuple[str | None, str], Reading] = {}
    for r in readings:
        k = (r.sense, r.concept)
        old = seen.get(k)
        # duplicates come from several labels/ILI statements: keep the smallest values
        if old is None or (r.lemma, r.ili or "", r.pos or "") < (old.lemma, old.ili or "", old.pos or ""):
            seen[k] = r
    return tuple(sorted(seen.values(), key=sort_key))


def readings_of(store: Store, targets: Sequence[str], lang: str) -> dict[str, tuple[Reading, ...]]:
    """Owner IRI → its readings, for every owner in ``targets`` (one query per BATCH owners)."""
    out: dict[str, list[Reading]] = {t: [] for t in targets}
    for i in range(0, len(targets), BATCH):
        chunk = targets[i : i + BATCH]
        rows = store.select("select-candidates", bind={"lang": Literal(lang)},
                            values=Values.column("target", [NamedNode(t) for t in chunk]))
        for row in rows:
            t = row["target"].value
            out.setdefault(t, []).append(_reading(row, t))
    return {t: _dedupe(rs) for t, rs in out.items()}


def kept_readings(store: Store, targets: Sequence[str], lang: str) -> dict[str, tuple[Reading, ...]]:
    """:func:`readings_of`, through the store's kept facts (:mod:`kg_rag.pipeline.kept_facts`,
    kind ``readings``): a thesaurus concept matched by its label is asked of the store once per
    catalog version, not once per process (a new process met ~130 such queries of ~8 ms each on
    the bench's 30 kB corpus). A store that keeps no facts is asked as before."""
    from kg_rag.pipeline.kept_facts import kept_facts

    kept = kept_facts(store) if targets else None
    if kept is None:
        return readings_of(store, targets, lang)
    keys = {f"{lang}\x1f{t}": t for t in targets}
    out = {keys[k]: tuple(Reading(*r) for r in rows)
           for k, rows in kept.get_many("readings", list(keys)).items()}
    rest = [t for t in targets if t not in out]
    if rest:
        found = readings_of(store, rest, lang)
        kept.put_many("readings", {f"{lang}\x1f{t}": [list(astuple(r)) for r in rs]
                                   for t, rs in found.items()})
        out.update(found)
    return out


def indexed_readings(store: Store, keys: dict[str, str], lang: str) -> dict[str, tuple[Reading, ...]]:
    """The readings of the owners in ``keys`` (owner IRI → one of its match keys in ``lang``)
    that the lemma index of an embedded store holds — dictionary entries: their rows are the
    ones :func:`readings_of` would query (same senses, concepts, forms, ranks and parts of
    speech; the index is kept per catalog version). Owners it does not hold (a thesaurus
    concept matched by its label, a store without the index) are left out, for
    :func:`readings_of`."""
    index = lemma_index(store)
    if index is None:
        return {}
    by_key: dict[str, list[list[str | None]]] = {}
    out: dict[str, tuple[Reading, ...]] = {}
    for target, key in keys.items():
        rows = by_key.get(key)
        if rows is None:
            rows = by_key[key] = index.rows(key, lang)
        mine = [r for r in rows if r[0] == target]   # r[0]: the entry
        if mine:
            out[target] = _indexed(mine)
    return out


def _indexed(rows: Iterable[list[str | None]]) -> tuple[Reading, ...]:
    """The readings of lemma index rows (fields in LEMMA_FIELDS order: entry concept sense rank
    senseKey pos lemma g)."""
    return _dedupe(_reading_of(c, s, e, lm, rk, sk, pos)  # type: ignore[arg-type]
                   for e, c, s, rk, sk, pos, lm, _ in rows)


def lemma_readings(store: Store, key: str, lang: str, graph: str | None = None) -> tuple[Reading, ...]:
    """Readings of the entries whose match key is ``key`` in ``lang`` (from the lemma index on an
    embedded store, else one query); ``graph``: only those of the source loaded into that named
    graph."""
    index = lemma_index(store)
    if index is None:
        return queried_lemma_readings(store, key, lang, graph)
    return _indexed(r for r in index.rows(key, lang) if graph is None or r[7] == graph)


def queried_lemma_readings(store: Store, key: str, lang: str,
                           graph: str | None = None) -> tuple[Reading, ...]:
    """:func:`lemma_readings` through one query on any store (what the lemma index must agree
    with)."""
    rows = store.select("select-lemma-candidates", bind={"key": Literal(key, language=lang)})
    return _dedupe(_reading(r, r["entry"].value) for r in rows
                   if graph is None or r["g"].value == graph)


__all__ = ["BATCH", "POS_ALIASES", "Reading", "check_pos", "indexed_readings", "lemma_readings",
           "queried_lemma_readings", "readings_of", "sort_key"]
