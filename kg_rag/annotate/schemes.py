"""Several schemes at once: where each candidate comes from, which candidates are one meaning,
and ``--scheme`` (DATA-MODEL.md "Several schemes").

::

    schemes = Schemes(store)
    cands = schemes.tag(cands)              # each with .scheme, .scheme_name, .source …
    schemes.same_meaning(cands)             # (('…stw/10234-4', '…unesco/concept1234'),)
    f = resolve_scheme(store, "stw")        # SchemeFilter; f.keeps(candidate)

A candidate's scheme is the ``skos:inScheme`` its source states (the concept's for a sense with
a concept), else its source graph. Candidates of *different* schemes linked by
``skos:exactMatch``/``skos:closeMatch`` (either direction, any graph — accepted alignments
included) are grouped (connected components over the mention's candidates) into one reading;
candidates of one scheme are never grouped, so a store with one scheme reads as before.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode

from kg_rag.errors import InputError
from kg_rag.model import Candidate, Mention
from kg_rag.pipeline.kept_facts import kept_facts
from kg_rag.store import Store, Values

#: how many IRIs go into one VALUES block
BATCH = 5000
_CACHE_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one concept or sense IRI is stated: its source graph (the first by IRI when several
    type it), that source's name, and the scheme it is in there (None: none stated)."""

    source: str
    source_name: str
    scheme: str | None


def _short(title: str) -> str:
    return title.split(".", 1)[0] if title else ""


class Schemes:
    """The origins and same-meaning links of candidate IRIs, asked once per IRI (cached)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._origins: dict[str, Origin | None] = {}
        self._matches: dict[str, frozenset[str]] = {}
        self._names: dict[str, str] | None = None

    def _source_names(self) -> dict[str, str]:
        if self._names is None:
            from loaders import list_sources

            self._names = {r.graph: _short(r.title) for r in list_sources(self.store)}
        return self._names

    def origins(self, iris: Iterable[str]) -> dict[str, Origin | None]:
        """Each IRI's :class:`Origin` (None: no loaded source types it): from this object's
        memory, else from the origins kept by earlier processes
        (:mod:`kg_rag.pipeline.kept_facts`), else from the store (and then kept)."""
        want = list(dict.fromkeys(iris))
        missing = [i for i in want if i not in self._origins]
        if missing:
            if len(self._origins) >= _CACHE_LIMIT:
                self._origins.clear()
            names = self._source_names()
            kept = kept_facts(self.store)
            stored = kept.get_many("origins", missing) if kept is not None else {}   # [g, scheme]
            ask = [i for i in missing if i not in stored]
            found: dict[str, list[tuple[str, str | None]]] = {}
            for i in range(0, len(ask), BATCH):
                rows = self.store.select("select-concept-schemes", values=Values.column(
                    "node", [NamedNode(t) for t in ask[i : i + BATCH]]))
                for r in rows:
                    g = r["g"].value
                    if g in names:   # a loaded source (the query does not join the catalog)
                        found.setdefault(r["node"].value, []).append(
                            (g, r["scheme"].value if "scheme" in r else None))
            asked: dict[str, tuple[str | None, str | None]] = {}
            for iri in ask:
                pairs = sorted(found.get(iri, ()), key=lambda p: (p[0], p[1] is None, p[1] or ""))
                asked[iri] = pairs[0] if pairs else (None, None)
            if kept is not None:
                kept.put_many("origins", asked)
            for iri, (g, scheme) in (stored | asked).items():
                # a few graphs and schemes, each read anew for every IRI: held once (interned)
                self._origins[iri] = None if g is None else Origin(
                    sys.intern(g), names.get(g, ""), sys.intern(scheme) if scheme else scheme)
        return {i: self._origins.get(i) for i in want}

    def tag(self, cands: Sequence[Candidate]) -> tuple[Candidate, ...]:
        """``cands`` with their scheme, source and source name (concept's scheme first; a
        sense's own source; unknown ones unchanged)."""
        iris = [c.concept for c in cands] + [c.sense for c in cands if c.sense]
        got = self.origins(iris)
        out = []
        for c in cands:
            so = got.get(c.sense) if c.sense else None
            co = got.get(c.concept) or so  # a sense-only reading: the sense is its concept
            if co is None:
                out.append(c)
                continue
            scheme = co.scheme or (so.scheme if so is not None else None) or co.source
            out.append(replace(c, scheme=scheme, scheme_source=co.source, scheme_name=co.source_name,
                               source=(so or co).source))
        return tuple(out)

    def matches(self, concepts: Iterable[str]) -> dict[str, frozenset[str]]:
        want = list(dict.fromkeys(concepts))
        missing = [c for c in want if c not in self._matches]
        if missing:  # one query per BATCH concepts (cached: a second call asks nothing)
            if len(self._matches) >= _CACHE_LIMIT:
                self._matches.clear()
            found: dict[str, set[str]] = {c: set() for c in missing}
            for i in range(0, len(missing), BATCH):
                rows = self.store.select("select-concept-matches", values=Values.column(
                    "concept", [NamedNode(t) for t in missing[i : i + BATCH]]))
                for r in rows:
                    found.setdefault(r["concept"].value, set()).add(r["other"].value)
            for c, others in found.items():
                self._matches[c] = frozenset(others)
        return {c: self._matches.get(c, frozenset()) for c in want}

    def same_meaning(self, cands: Sequence[Candidate]) -> tuple[tuple[str, ...], ...]:
        """Groups (two or more concepts, in candidate order) of ``cands``' concepts of different
        schemes linked by exactMatch/closeMatch; () when the candidates are of one scheme."""
        scheme = {c.concept: c.scheme or c.concept for c in cands}
        if len(set(scheme.values())) < 2:
            return ()
        concepts = list(scheme)
        links = self.matches(concepts)
        parent = {c: c for c in concepts}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a in concepts:
            for b in links.get(a, ()):
                if b in parent and scheme[a] != scheme[b]:
                    ra, rb = find(a), find(b)
                    if ra != rb:
                        parent[rb] = ra
        groups: dict[str, list[str]] = {}
        for c in concepts:
            groups.setdefault(find(c), []).append(c)
        return tuple(tuple(g) for g in groups.values() if len(g) > 1)


def merge_groups(*groupings: Sequence[Sequence[str]]) -> tuple[tuple[str, ...], ...]:
    """One grouping from several (groups sharing a concept are joined), first seen first."""
    out: list[list[str]] = []
    for grouping in groupings:
        for g in grouping:
            hit = [o for o in out if set(o) & set(g)]
            merged = [c for o in hit for c in o]
            merged += [c for c in g if c not in merged]
            out = [o for o in out if o not in hit] + [merged]
    return tuple(tuple(g) for g in out)


@dataclass(frozen=True, slots=True)
class SchemeFilter:
    """``--scheme``: keep the candidates of one concept scheme (by its IRI) or of one loaded
    source (by its graph IRI or name: the candidates whose sense or concept it holds)."""

    name: str
    scheme: str | None = None   # a concept scheme IRI
    source: str | None = None   # a source graph IRI

    def keeps(self, c: Candidate) -> bool:
        if self.scheme is not None and c.scheme == self.scheme:
            return True
        return self.source is not None and self.source in (c.source, c.scheme_source)

    def keeps_origin(self, o: Origin | None) -> bool:
        if o is None:
            return False
        return (self.scheme is not None and o.scheme == self.scheme) or \
            (self.source is not None and o.source == self.source)

    def concepts(self, schemes: Schemes, iris: Iterable[str]) -> set[str]:
        """Those of ``iris`` that are of this scheme (retrieval's expanded concepts)."""
        return {i for i, o in schemes.origins(iris).items() if self.keeps_origin(o)}

    def mention(self, m: Mention) -> Mention | None:
        """``m`` with only this scheme's candidates (None when none is left)."""
        kept = tuple(c for c in m.candidates if self.keeps(c))
        if not kept:
            return None
        if len(kept) == len(m.candidates):
            return m
        concepts = {c.concept for c in kept}
        groups = tuple(g2 for g in m.same_meaning if len(g2 := tuple(c for c in g if c in concepts)) > 1)
        return replace(m, candidates=kept, same_meaning=groups)


def resolve_scheme(store: Store, name: str) -> SchemeFilter:
    """The filter ``name`` names: a loaded source (graph IRI, file name or file name without
    suffix, as ``kg-rag sources`` lists them) or a concept scheme IRI; InputError otherwise."""
    from loaders.catalog import resolve_source

    want = name.strip() if isinstance(name, str) else ""
    if want.startswith("<") and want.endswith(">"):
        want = want[1:-1].strip()
    if not want:
        raise InputError("--scheme is empty; give a concept scheme IRI or a source name "
                         "(`kg-rag sources` lists them)")
    try:
        return SchemeFilter(name, source=resolve_source(store, want).graph)
    except InputError:
        pass
    if want.startswith(("http://", "https://", "urn:")):
        try:
            node = NamedNode(want)
        except ValueError:
            node = None
        if node is not None and store.ask("ask-concept-scheme", bind={"scheme": node}):
            return SchemeFilter(name, scheme=want)
    raise InputError(f"no concept scheme or loaded source {name!r}; give a scheme IRI or a "
                     f"source name as `kg-rag sources` lists them")


__all__ = ["Origin", "SchemeFilter", "Schemes", "merge_groups", "resolve_scheme"]
