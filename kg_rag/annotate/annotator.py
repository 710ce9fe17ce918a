"""Find mentions of concept labels and dictionary written forms in a text.

::

    ann = LexiconAnnotator(store)               # builds the Lexicon once (or pass lexicon=)
    ann.annotate("הפירות העמיסו על הבדים", "he")
    # [Mention(start=0, end=6, text='הפירות', …), Mention(start=17, end=22, text='הבדים',
    #   candidates=(Candidate(concept=…fabric, matched_by='prefix:ה+lemma'), …branch…))]
    ann.candidates_for_lemma("bank", "en", pos="n")

How a text is matched (all in the text's language, plus untagged thesaurus labels):

1. the whole text is normalised once (:mod:`.tokenize`) and scanned once by the lexicon's
   Aho-Corasick automaton for multiword/punctuated keys (``fruit tree``) — *fixed phrases*;
2. every word is analysed (cached per distinct word): surface, lemma, Hebrew prefix-stripped
   stems and their lemmas; suffix guesses only when nothing else matched;
3. multiword keys are also tried over the analyses of consecutive words (``fruit trees`` →
   ``fruit tree``, ``ועצי פרי`` → ``עץ פרי``);
4. longest match wins, leftmost first. Words inside a fixed phrase give no mentions of their
   own; words inside a phrase found only through analyses stay as extra, nested mentions —
   except in a *figurative* phrase (an idiom entry, DATA-MODEL.md "Figurative phrases"), which
   is one mention with only its figurative readings however it was matched (``וכרסה בין שיניה``);
5. matched owners are resolved to candidates with ONE query (VALUES over their IRIs); a
   dictionary entry's from the lemma index instead when the store has one (built by a
   warmed-up process, :mod:`kg_rag.pipeline.evidence_index`: the same rows).
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from pyoxigraph import NamedNode

from kg_rag.annotate.candidates import (
    Reading,
    check_pos,
    indexed_readings,
    kept_readings,
    lemma_readings,
    sort_key,
)
from kg_rag.annotate.lexicon import Lexicon
from kg_rag.annotate.schemes import SchemeFilter, Schemes
from kg_rag.errors import InputError
from kg_rag.model import Candidate, Mention
from kg_rag.pipeline.evidence_index import prepare
from kg_rag.settings import settings
from kg_rag.store import Store, Values
from kg_rag.text.analyse import analyses, clean_surface, fallback_forms, how_rank
from kg_rag.text.langid import check_language
from kg_rag.text.normalise import match_key, nfc
from kg_rag.text.tokenise import WORD, Normalised, normalise

log = logging.getLogger(__name__)

MAX_PHRASE_WORDS = 8
_CACHE_LIMIT = 100_000      # per cache: distinct words, owners, matched-key sets (cleared when full)


@dataclass(frozen=True, slots=True)
class _WordInfo:
    """Cached per (language, spelling): key ids with how they matched, and all analysed forms."""

    matches: tuple[tuple[int, str], ...]
    forms: tuple[tuple[str, str], ...]
    phrase_forms: tuple[tuple[str, str], ...]   # forms that begin some multiword key
    analysed: bool                               # has forms other than the surface


@dataclass(slots=True)
class _Span:
    start: int                       # offsets in norm
    end: int
    words: int                       # how many words it covers
    matches: dict[int, str] = field(default_factory=dict)   # key id → best how
    fixed: bool = False              # found as a whole phrase on the surface

    def add(self, kid: int, how: str) -> None:
        old = self.matches.get(kid)
        if old is None or how_rank(how) < how_rank(old):
            self.matches[kid] = how


def capped(cands: Iterable[Candidate], word: str) -> tuple[Candidate, ...]:
    """``cands`` in :func:`sort_key` order, at most ``Settings.max_candidates`` of them: beyond
    that, those of lowest sense rank (readings without a rank last) — a word with 100,000 senses
    would otherwise make every question that contains it fetch and weigh them all. Logged."""
    cands = list(cands)
    cap = settings().max_candidates
    if len(cands) > cap:
        log.warning("%r has %d readings; the %d of lowest sense rank are kept "
                    "(KG_RAG_MAX_CANDIDATES)", word, len(cands), cap)
        cands = sorted(cands, key=lambda c: (c.rank if c.rank is not None else 1 << 30,
                                             sort_key(c)))[:cap]
    return tuple(sorted(cands, key=sort_key))


class LexiconAnnotator:
    """Mentions of the store's labels and written forms in texts (see the module docstring);
    the :class:`kg_rag.annotate.Annotator` of the pipeline."""

    def __init__(self, store: Store, lexicon: Lexicon | None = None) -> None:
        self.store = store
        self._lexicon = lexicon
        self._words: dict[tuple[str, str], _WordInfo] = {}
        self._readings: dict[tuple[str, str], tuple[Reading, ...]] = {}
        self._cands: dict[tuple[str, str | None, tuple[tuple[int, str], ...]],
                          tuple[tuple[Candidate, ...], tuple[tuple[str, ...], ...]]] = {}
        self.schemes = Schemes(store)
        self._figurative: dict[str, bool] = {}   # entry IRI → a fixed figurative phrase?

    @property
    def lexicon(self) -> Lexicon:
        if self._lexicon is None:
            self._lexicon = Lexicon.from_store(self.store)
        return self._lexicon

    # --- public ---------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the lexicon and build (or open) the lemma and evidence indexes now, for a process
        that will look up many lemmas (else a large store is queried per lemma until some
        process has built them: :mod:`kg_rag.pipeline.evidence_index`)."""
        _ = self.lexicon
        prepare(self.store)

    def annotate(self, text: str, lang: str, pos: str | None = None,
                 scheme: SchemeFilter | None = None) -> list[Mention]:
        """Every mention in ``text`` (offsets into ``nfc(text)``), sorted by start, longest
        first. ``pos`` keeps only candidates of that part of speech (or of none); ``scheme``
        only those of one concept scheme or source (a mention left with none is dropped)."""
        code = check_language(lang)
        pos_name = check_pos(pos)
        if not isinstance(text, str):
            raise InputError("the text to annotate must be a string")
        text = nfc(text)
        if not text.strip():
            return []
        n = normalise(text)
        spans = self._spans(n, code)
        chosen = _choose(spans)
        if not chosen:
            return []
        # candidates depend only on (language, POS filter, matched keys with how): cached
        keyed = [(sp, (code, pos_name, tuple(sorted(sp.matches.items())))) for sp in chosen]
        todo = [sp for sp, k in keyed if k not in self._cands]
        if todo:
            readings = self._resolve(todo, code)
            if len(self._cands) >= _CACHE_LIMIT:
                self._cands.clear()
            raw = {k: self._candidates(sp, code, pos_name, readings) for sp, k in keyed
                   if k not in self._cands}
            # where each candidate comes from: one query for all of them (cached per IRI)
            self.schemes.origins([i for cs in raw.values() for c in cs
                                  for i in (c.concept, c.sense) if i])
            tagged = {k: self.schemes.tag(cs) for k, cs in raw.items()}
            # same-meaning links of mentions read in several schemes: one query for all of them
            self.schemes.matches([c.concept for cs in tagged.values()
                                  if len({c.scheme for c in cs}) > 1 for c in cs])
            for k, cs in tagged.items():
                self._cands[k] = (cs, self.schemes.same_meaning(cs) if len(cs) > 1 else ())
        found = []
        for sp, k in keyed:
            final, groups = self._cands[k]
            if not final:
                continue
            s, e = n.orig_start(sp.start), n.orig_end(sp.end)
            found.append((sp.words, Mention(start=s, end=e, text=text[s:e], lang=code, candidates=final,
                                            fixed_phrase=sp.fixed, same_meaning=groups)))
        idioms = self._idioms({c.entry for words, m in found if words > 1 for c in m.candidates
                               if c.entry is not None})
        mentions = []
        for m in _figurative(found, idioms) if idioms else (m for _, m in found):
            kept = m if scheme is None else scheme.mention(m)
            if kept is not None:
                mentions.append(kept)
        mentions.sort(key=lambda m: (m.start, -m.end))
        return mentions

    def _idioms(self, entries: set[str]) -> set[str]:
        """Which of ``entries`` (of multiword mentions) are fixed figurative phrases: one query
        for those not asked before (``sparql/select-figurative-entries.rq``)."""
        todo = sorted(e for e in entries if e not in self._figurative)
        if todo:
            if len(self._figurative) >= _CACHE_LIMIT:
                self._figurative.clear()
            rows = self.store.select("select-figurative-entries",
                                     values=Values.column("entry", [NamedNode(e) for e in todo]))
            hit = {r["entry"].value for r in rows}
            self._figurative.update((e, e in hit) for e in todo)
        return {e for e in entries if self._figurative.get(e, False)}

    def _candidates(self, sp: _Span, lang: str, pos_name: str | None,
                    readings: dict[str, tuple[Reading, ...]]) -> tuple[Candidate, ...]:
        lex = self.lexicon
        cands: dict[tuple[str | None, str], Candidate] = {}
        for kid, how in sorted(sp.matches.items(), key=lambda kv: (how_rank(kv[1]), kv[0])):
            for tid in lex.owners(kid):
                for r in readings.get(lex.targets[tid], ()):
                    if pos_name is not None and r.pos is not None and r.pos != pos_name:
                        continue
                    cands.setdefault((r.sense, r.concept), r.candidate(lang, how, lex.keys[kid]))
        # a concept reached through a dictionary sense is not repeated as a bare label match
        by_sense = {c.concept for c in cands.values() if c.sense is not None}
        return capped([c for c in cands.values() if c.sense is not None or c.concept not in by_sense],
                      lex.keys[min(sp.matches)] if sp.matches else "")

    def candidates_for_lemma(self, lemma: str, lang: str, pos: str | None = None,
                             graph: str | None = None) -> tuple[Candidate, ...]:
        """The dictionary senses of ``lemma`` in the lexicons of ``lang`` (one lookup in the lemma
        index, else one query); ``graph``: only in the source loaded into that named graph."""
        code = check_language(lang)
        pos_name = check_pos(pos)
        key = match_key(lemma)
        if not key:
            raise InputError("the lemma is empty")
        out = []
        for r in lemma_readings(self.store, key, code, graph):
            if pos_name is not None and r.pos is not None and r.pos != pos_name:
                continue
            out.append(r.candidate(code, "lemma", lemma))
        return capped(out, key)

    # --- matching ---------------------------------------------------------------------------
    def _word(self, lang: str, word: str, raw: str) -> _WordInfo:
        ck = (lang, raw)
        info = self._words.get(ck)
        if info is not None:
            return info
        lex = self.lexicon
        forms = analyses(word, clean_surface(raw), lang)
        matches = [(kid, how) for form, how in forms for kid in lex.word(lang, form)]
        if not matches and forms:
            matches = [(kid, how) for form, how in fallback_forms(word, lang)
                       for kid in lex.word(lang, form)]
        if not forms:  # a stop word: only its surface may take part in a phrase
            forms = ((word, "surface"),)
        starts = tuple((f, how) for f, how in forms if lex.phrase_prefix(lang, f + " "))
        info = _WordInfo(tuple(matches), forms, starts, len(forms) > 1)
        if len(self._words) >= _CACHE_LIMIT:
            self._words.clear()
        self._words[ck] = info
        return info

    def _spans(self, n: Normalised, lang: str) -> list[_Span]:
        lex = self.lexicon
        norm, scan, text = n.norm, n.scan, n.text
        spans: dict[tuple[int, int], _Span] = {}

        def span(s: int, e: int, words: int) -> _Span:
            sp = spans.get((s, e))
            if sp is None:
                sp = spans[(s, e)] = _Span(s, e, words)
            return sp

        words = [m.span() for m in WORD.finditer(norm)]
        infos = []
        plain = not n._nstart
        for s, e in words:
            raw = text[s:e] if plain else text[n.orig_start(s) : n.orig_end(e)]
            info = self._word(lang, norm[s:e], raw)
            infos.append(info)
            for kid, how in info.matches:
                span(s, e, 1).add(kid, how)
        # fixed phrases: one scan of the whole text
        for hit in lex.scan(lang, scan, norm):
            nwords = len(WORD.findall(norm, hit.start, hit.end))
            sp = span(hit.start, hit.end, nwords)
            sp.add(hit.kid, "mwe" if nwords > 1 else "surface")
            sp.fixed = sp.fixed or nwords > 1
        # phrases through analyses of consecutive words: only where an analysed word is in reach
        next_analysed = len(infos)
        for i in range(len(infos) - 1, -1, -1):
            if infos[i].analysed:
                next_analysed = i
            if infos[i].phrase_forms and next_analysed - i < MAX_PHRASE_WORDS:
                self._phrases_from(i, words, infos, scan, lang, span)
        return list(spans.values())

    def _phrases_from(self, i: int, words: list[tuple[int, int]], infos: list[_WordInfo],
                      scan: str, lang: str, span: Callable[[int, int, int], _Span]) -> None:
        lex = self.lexicon
        # partial phrases: (joined forms, used an analysis other than the surface?, how)
        frontier = [(f, how != "surface", how) for f, how in infos[i].phrase_forms]
        j = i
        while frontier and j + 1 < len(words) and j - i + 1 < MAX_PHRASE_WORDS:
            if scan[words[j][1] : words[j + 1][0]] != " ":
                break
            j += 1
            nxt = []
            for joined, analysed, how in frontier:
                if j > i + 1 and not lex.phrase_prefix(lang, joined + " "):
                    continue
                for f, h in infos[j].forms:
                    cand = joined + " " + f
                    used = analysed or h != "surface"
                    h2 = how if how != "surface" else h
                    if used:
                        for kid in lex.word(lang, cand):
                            span(words[i][0], words[j][1], j - i + 1).add(kid, _phrase_how(h2))
                    nxt.append((cand, used, h2))
            frontier = nxt

    def _resolve(self, spans: Iterable[_Span], lang: str) -> dict[str, tuple[Reading, ...]]:
        lex = self.lexicon
        wanted: dict[str, str] = {}   # owner → the match key it was found by
        for sp in spans:
            for kid in sp.matches:
                for tid in lex.owners(kid):
                    wanted.setdefault(lex.targets[tid], lex.keys[kid])
        missing = {t: k for t, k in wanted.items() if (lang, t) not in self._readings}
        if missing:
            if len(self._readings) >= _CACHE_LIMIT:
                self._readings.clear()
            found = indexed_readings(self.store, missing, lang)
            found.update(kept_readings(self.store, [t for t in missing if t not in found], lang))
            for t, rs in found.items():
                self._readings[(lang, t)] = rs
        return {t: self._readings.get((lang, t), ()) for t in wanted}


def _figurative(found: list[tuple[int, Mention]], idioms: set[str]) -> list[Mention]:
    """A phrase of several words with a figurative reading (an entry in ``idioms``) is one
    mention with only its figurative readings, and no mention inside it is kept (its words are
    not read literally)."""
    figs: list[Mention] = []
    rest: list[Mention] = []
    for words, m in found:
        fig = tuple(c for c in m.candidates if c.entry in idioms) if words > 1 else ()
        if fig:
            kept = {c.concept for c in fig}
            figs.append(replace(m, candidates=fig, fixed_phrase=True,
                                same_meaning=tuple(g for g in m.same_meaning if set(g) <= kept)))
        else:
            rest.append(m)
    return figs + [m for m in rest
                   if not any(f.start <= m.start and m.end <= f.end for f in figs)]


def _phrase_how(how: str) -> str:
    if how.startswith("prefix"):
        return how.split("+", 1)[0] + "+mwe"
    return "mwe+lemma"


def _choose(spans: list[_Span]) -> list[_Span]:
    """Longest match, leftmost first, over phrases; nested spans stay only inside a phrase that
    was not found as a fixed phrase."""
    spans = [sp for sp in spans if sp.matches]
    phrases = sorted((sp for sp in spans if sp.words > 1 or sp.fixed),
                     key=lambda sp: (sp.start, -(sp.end - sp.start)))
    chosen: list[_Span] = []
    last_end = -1
    for sp in phrases:
        if sp.start >= last_end:
            chosen.append(sp)
            last_end = sp.end
    out = list(chosen)
    taken = {(sp.start, sp.end) for sp in chosen}
    starts = [c.start for c in chosen]
    for sp in spans:
        if (sp.start, sp.end) in taken:
            continue
        k = bisect_right(starts, sp.start) - 1
        left = chosen[k] if k >= 0 and sp.start < chosen[k].end else None
        right = chosen[k + 1] if k + 1 < len(chosen) and chosen[k + 1].start < sp.end else None
        if left is not None and sp.end <= left.end and right is None:
            if not left.fixed:  # nested in a phrase found only through analyses
                out.append(sp)
        elif left is None and right is None:
            out.append(sp)
    out.sort(key=lambda sp: (sp.start, -sp.end))
    return out


__all__ = ["LexiconAnnotator"]
