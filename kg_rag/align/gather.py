"""Read what alignment needs from the store: one dictionary source's senses (with their
translation equivalents and texts) and one thesaurus source's concepts.

Every query is a file under ``sparql/`` (``select-align-*``); values are bound as RDF terms.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace

from pyoxigraph import Literal, NamedNode

from kg_rag.align.model import DictSense, Label, ThesaurusConcept
from kg_rag.store import Store
from kg_rag.store.render import Values
from kg_rag.text.normalise import base_language, match_key, nfc

#: VALUES rows per query
CHUNK = 500
#: how many translation steps a sense's equivalents may be away (2: through a pivot language —
#: a Hebrew sense translated to English and German reaches German from English)
TRANSLATION_HOPS = 2
LABEL_KINDS = ("pref", "alt", "hidden")
TEXT_KINDS = ("definition", "scopeNote", "example", "note")
LINK_KINDS = ("broader", "narrower", "related")


def _chunks(items: list[NamedNode]) -> Iterator[list[NamedNode]]:
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


def _lang(term: object, default: str = "") -> str:
    return base_language(getattr(term, "language", None)) or default


def read_senses(store: Store, graph: str) -> dict[str, DictSense]:
    """The senses of the dictionary graph, by IRI (texts and equivalents not yet read)."""
    g = NamedNode(graph)
    keys: dict[str, set[str]] = defaultdict(set)
    base: dict[str, dict[str, object]] = {}
    for r in store.select("select-align-senses", bind={"g": g}):
        s = r["sense"].value
        keys[s].add(r["key"].value)
        rec = base.setdefault(s, {"entry": r["entry"].value, "lemma": nfc(r["lemma"].value),
                                  "lang": _lang(r["key"], _lang(r["lemma"]))})
        if "pos" in r:
            rec["pos"] = r["pos"].value.rsplit("#", 1)[-1]
        if "rank" in r:
            rec["rank"] = int(r["rank"].value)
        if "concept" in r and isinstance(r["concept"], NamedNode):
            rec["concept"] = r["concept"].value
    return {s: DictSense(sense=s, entry=str(rec["entry"]), lang=str(rec["lang"]),
                         lemma=str(rec["lemma"]), keys=frozenset(keys[s]),
                         pos=rec.get("pos"),  # type: ignore[arg-type]
                         rank=rec.get("rank"),  # type: ignore[arg-type]
                         concept=rec.get("concept"))  # type: ignore[arg-type]
            for s, rec in base.items()}


def _translation_graph(store: Store, graph: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for r in store.select("select-align-translations", bind={"g": NamedNode(graph)}):
        out[r["a"].value].add(r["b"].value)
    return out


def _reach(start: str, links: dict[str, set[str]], hops: int) -> set[str]:
    seen, frontier = {start}, {start}
    for _ in range(hops):
        frontier = {b for a in frontier for b in links.get(a, ())} - seen
        seen |= frontier
    return seen - {start}


def _keys_of(store: Store, query: str, var: str, iris: Iterable[str]) -> dict[str, set[tuple[str, str]]]:
    """(language, match key) pairs per IRI from a ``?var ?key`` query."""
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    nodes = [NamedNode(i) for i in sorted(set(iris))]
    for chunk in _chunks(nodes):
        for r in store.select(query, values=Values.column(var, chunk)):
            key = r["key"]
            if isinstance(key, Literal):
                out[r[var].value].add((_lang(key), key.value))
    return out


def add_equivalents(store: Store, graph: str, senses: dict[str, DictSense],
                    wanted: Iterable[str] | None = None) -> dict[str, DictSense]:
    """The senses with their equivalents — the words of their translation equivalents (up to
    :data:`TRANSLATION_HOPS` steps) and of other languages' senses of the concept they already
    have — and their synonyms (that concept's other words in their own language)."""
    links = _translation_graph(store, graph)
    todo = list(senses) if wanted is None else [s for s in wanted if s in senses]
    reach = {s: _reach(s, links, TRANSLATION_HOPS) for s in todo}
    local = {s: {(d.lang, k) for k in d.keys} for s, d in senses.items()}
    others = {t for ts in reach.values() for t in ts if t not in local}
    far = _keys_of(store, "select-align-sense-keys", "sense", others) if others else {}
    concepts = {senses[s].concept for s in todo if senses[s].concept}
    colex = _keys_of(store, "select-align-colexical", "concept",
                     [c for c in concepts if c]) if concepts else {}
    out = dict(senses)
    for s in todo:
        d = senses[s]
        pairs: set[tuple[str, str]] = set()
        for t in reach[s]:
            pairs |= local.get(t) or far.get(t, set())
        shared = colex.get(d.concept, set()) if d.concept else set()
        pairs |= {(lang, k) for lang, k in shared if lang != d.lang}
        own = {(d.lang, k) for k in d.keys}
        by_lang: dict[str, set[str]] = defaultdict(set)
        for lang, key in pairs - own:
            if lang:
                by_lang[lang].add(key)
        synonyms = frozenset(k for lang, k in shared if lang == d.lang) - d.keys
        out[s] = replace(d, equivalents=tuple(sorted((lang, frozenset(ks)) for lang, ks in by_lang.items())),
                         synonyms=synonyms)
    return out


def add_texts(store: Store, graph: str, senses: dict[str, DictSense],
              wanted: Iterable[str]) -> dict[str, DictSense]:
    """The senses ``wanted`` with their definitions, examples and notes (read for the whole
    graph in one query, kept for the senses wanted)."""
    want = set(wanted)
    texts: dict[str, dict[tuple[str, str], None]] = defaultdict(dict)
    for r in store.select("select-align-sense-texts", bind={"g": NamedNode(graph)}):
        s = r["sense"].value
        if s in want:
            texts[s][(nfc(r["text"].value), _lang(r["text"], senses[s].lang))] = None
    out = dict(senses)
    for s, ts in texts.items():
        out[s] = replace(senses[s], texts=tuple(ts))
    return out


def read_concepts(store: Store, graph: str) -> dict[str, ThesaurusConcept]:
    """The concepts of the thesaurus graph with their labels, texts and neighbours."""
    labels: dict[str, dict[Label, None]] = defaultdict(dict)
    texts: dict[str, dict[tuple[str, str], None]] = defaultdict(dict)
    links: dict[str, dict[str, None]] = defaultdict(dict)
    for r in store.select("select-align-concepts", bind={"g": NamedNode(graph)}):
        c, kind, v = r["concept"].value, r["kind"].value, r["value"]
        if kind in LABEL_KINDS and isinstance(v, Literal):
            key = match_key(v.value)
            if key:
                labels[c][Label(key, _lang(v), kind)] = None
        elif kind in TEXT_KINDS and isinstance(v, Literal):
            texts[c][(nfc(v.value), _lang(v))] = None
        elif kind in LINK_KINDS and isinstance(v, NamedNode) and v.value != c:
            links[c][v.value] = None
        else:
            labels.setdefault(c, {})
    every = set(labels) | set(texts) | set(links)
    return {c: ThesaurusConcept(c, tuple(labels.get(c, {})), tuple(texts.get(c, {})),
                                tuple(links.get(c, {}))) for c in sorted(every)}


def concepts_as_senses(concepts: dict[str, ThesaurusConcept]) -> dict[str, DictSense]:
    """A thesaurus's concepts as the aligner's senses, to align two thesauri: each concept is a
    "sense" that already has its concept (itself: an accepted link states ``skos:closeMatch``),
    its words are its labels — those in the thesaurus's main language (the most frequent
    language of its preferred labels) as its own, the others as translation equivalents — and
    its texts are its definitions and scope notes."""
    counts: dict[str, int] = defaultdict(int)
    for tc in concepts.values():
        for lb in tc.labels:
            if lb.kind == "pref" and lb.lang:
                counts[lb.lang] += 1
    main = max(sorted(counts), key=lambda lang: counts[lang]) if counts else ""
    out: dict[str, DictSense] = {}
    for c, tc in concepts.items():
        by_lang: dict[str, set[str]] = defaultdict(set)
        for lb in tc.labels:
            by_lang[lb.lang].add(lb.key)
        own = frozenset(by_lang.pop(main, set()))
        pref = sorted(lb.key for lb in tc.labels if lb.kind == "pref" and lb.lang == main)
        lemma = pref[0] if pref else min(own, default="")
        out[c] = DictSense(sense=c, entry=c, lang=main if own else "", lemma=lemma, keys=own,
                           concept=c, texts=tc.texts,
                           equivalents=tuple(sorted((lang, frozenset(ks)) for lang, ks in by_lang.items()
                                                    if lang)))
    return out
