"""The annotator's in-memory index of every match key in the store.

Built once from ONE query (``sparql/select-match-keys.rq``, read as CSV): (match key, language,
owner IRI) — the owner is a lexical entry or a concept, which the candidate query tells apart
per text. Per language:

* every key in a ``dict`` (key → key id) — looked up per word and per analysis of a word
  (lemma, prefix-stripped stem) and for phrases built from analyses;
* keys of several words or with punctuation (``fruit tree``, ``u.s.``, ``ג'ירפה``) in an
  Aho-Corasick automaton over their *scan form* padded with spaces (``" fruit tree "``), run
  once over the whole normalised text (:mod:`.tokenize`), so every hit lies on word boundaries.

Keys without a language tag (thesaurus labels) are kept under ``""`` and match in every
language. Owner IRIs are interned once (key ids → owner ids in flat ``array``\\ s), so OEWN with
the OMW lexicons stays within a few hundred MB at most.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import time
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import ahocorasick

from kg_rag.derived import Derived, Slot, catalog_version
from kg_rag.errors import StoreError
from kg_rag.store import Store, queries
from kg_rag.text.normalise import base_language
from kg_rag.text.tokenise import NON_WORD

log = logging.getLogger(__name__)


def scan_form(key: str) -> str:
    """The key as it appears in the scan text: every non-word character becomes a space."""
    return NON_WORD.sub(" ", key)


@dataclass(frozen=True, slots=True)
class Hit:
    """An automaton hit in the normalised text: [start, end) in ``norm`` and the key id."""

    start: int
    end: int
    kid: int


class _LangIndex:
    __slots__ = ("words", "automaton", "n_phrases")

    def __init__(self) -> None:
        self.words: dict[str, int] = {}
        self.automaton: ahocorasick.Automaton | None = None
        self.n_phrases = 0


class Lexicon:
    """Match keys → owner IRIs (lexical entries and concepts), per language."""

    def __init__(self, rows: Iterable[tuple[str, str, str]], version: str = "") -> None:
        """``rows``: (match key, language tag, owner IRI)."""
        t0 = time.perf_counter()
        self.version = version
        self.targets: list[str] = []          # owner id → IRI (lexical entry or concept)
        tid_of: dict[str, int] = {}
        base: dict[str, str] = {}
        # language → key → owner id (or several); becomes key → key id below
        per_lang: dict[str, dict[str, Any]] = {}
        for key, lang, target in rows:
            if not key:
                continue
            tid = tid_of.get(target)
            if tid is None:
                tid = tid_of[target] = len(self.targets)
                self.targets.append(target)
            b = base.get(lang)
            if b is None:
                b = base[lang] = base_language(lang)
            d = per_lang.get(b)
            if d is None:
                d = per_lang[b] = {}
            old = d.get(key)
            if old is None:
                d[key] = tid
            elif type(old) is int:
                if old != tid:
                    d[key] = [old, tid]
            elif tid not in old:
                old.append(tid)
        del tid_of
        self.keys: list[str] = []              # key id → key (the same string objects)
        self._off = array("I", [0])            # key id → slice of _tids
        self._tids = array("I")
        self._langs: dict[str, _LangIndex] = {}
        self._alias: dict[int, list[int]] = {}  # key id → further key ids of the same scan form
        keys, tids, off = self.keys, self._tids, self._off
        for lang, d in per_lang.items():
            idx = self._langs[lang] = _LangIndex()
            forms: dict[str, int] = {}
            for key, owners in d.items():
                kid = len(keys)
                keys.append(key)
                if type(owners) is int:
                    tids.append(owners)
                else:
                    tids.extend(sorted(owners))
                off.append(len(tids))
                d[key] = kid  # same size: safe while iterating
                if NON_WORD.search(key) is not None:
                    form = " " + NON_WORD.sub(" ", key) + " "
                    first = forms.setdefault(form, kid)
                    if first != kid:
                        self._alias.setdefault(first, []).append(kid)
            idx.words = d  # every key of the language (phrases too) → key id
            if forms:
                a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
                for form, kid in forms.items():
                    a.add_word(form, kid)
                a.make_automaton()
                idx.automaton = a
                idx.n_phrases = len(forms)
        del per_lang
        self._idx_cache: dict[str, list[_LangIndex]] = {}
        self.build_seconds = time.perf_counter() - t0
        log.info("lexicon: %d keys, %d owners, %d languages in %.2fs", len(self.keys),
                 len(self.targets), len(self._langs), self.build_seconds)

    # --- building from a store ------------------------------------------------------------
    @classmethod
    def from_store(cls, store: Store, version: str | None = None) -> Lexicon:
        """Read every match key of ``store`` with one query; ``version``: the store's
        :func:`~kg_rag.derived.catalog_version` (asked when not given)."""
        if version is None:
            version = catalog_version(store)
        q = queries.get("select-match-keys")
        body, media = store.raw_query(q.text, "csv")
        return cls(_parse_rows(body, media), version=version)

    # --- lookups ----------------------------------------------------------------------------
    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self._langs))

    def __len__(self) -> int:
        return len(self.keys)

    def _indexes(self, lang: str) -> list[_LangIndex]:
        cached = self._idx_cache.get(lang)
        if cached is not None:
            return cached
        out = []
        idx = self._langs.get(lang)
        if idx is not None:
            out.append(idx)
        if lang:
            untagged = self._langs.get("")
            if untagged is not None:
                out.append(untagged)
        self._idx_cache[lang] = out
        return out

    def word(self, lang: str, form: str) -> list[int]:
        """Key ids of the match key ``form`` in ``lang`` (and untagged)."""
        out = []
        for idx in self._indexes(lang):
            kid = idx.words.get(form)
            if kid is not None:
                out.append(kid)
        return out

    def lookup(self, lang: str, key: str) -> list[int]:
        """Key ids of any match key (one word or several) in ``lang`` (and untagged)."""
        return self.word(lang, key)

    def has_phrases(self, lang: str) -> bool:
        return any(idx.automaton is not None for idx in self._indexes(lang))

    def phrase_prefix(self, lang: str, prefix: str) -> bool:
        """Is ``" " + prefix`` the start of some multiword key's scan form?"""
        probe = " " + prefix
        for idx in self._indexes(lang):
            if idx.automaton is not None and idx.automaton.match(probe):
                return True
        return False

    def scan(self, lang: str, scan_text: str, norm: str) -> Iterator[Hit]:
        """Every multiword/punctuated key in ``scan_text`` (a :class:`Normalised` ``.scan``),
        checked against ``norm`` for keys whose punctuation the scan form blurs."""
        padded = " " + scan_text + " "
        for idx in self._indexes(lang):
            a = idx.automaton
            if a is None:
                continue
            for end, kid in a.iter(padded):
                key = self.keys[kid]
                # the padded form ends at padded[end]; the key is padded[end - len(key) : end],
                # which is norm[end - len(key) - 1 : end - 1]
                s = end - len(key) - 1
                e = end - 1
                for k in (kid, *self._alias.get(kid, ())):
                    kk = self.keys[k]
                    if norm[s:e] == kk:
                        yield Hit(s, e, k)

    def owners(self, kid: int) -> list[int]:
        return list(self._tids[self._off[kid] : self._off[kid + 1]])

    def stats(self) -> dict[str, int]:
        return {
            "keys": len(self.keys),
            "owners": len(self.targets),
            "languages": len(self._langs),
            "phrases": sum(i.n_phrases for i in self._langs.values()),
        }


#: the lexicon, in the store's registry
LEXICON: Slot[Lexicon] = Slot("lexicon")


def store_lexicon(store: Store) -> Lexicon:
    """The lexicon of ``store`` from its registry (built once per catalog version)."""
    derived = Derived.of(store)
    return derived.value(LEXICON, lambda: Lexicon.from_store(store, derived.version()))


def _parse_rows(body: bytes, media: str) -> Iterator[tuple[str, str, str]]:
    if "csv" in media:
        reader = csv.reader(io.StringIO(body.decode("utf-8")))
        head = next(reader, None)
        if head != ["key", "lang", "target"]:
            raise StoreError(f"select-match-keys answered with unexpected columns {head}")
        yield from ((key, lang, target) for key, lang, target in reader)
    elif "json" in media:
        data = json.loads(body)
        for b in data["results"]["bindings"]:
            yield b["key"]["value"], b.get("lang", {}).get("value", ""), b["target"]["value"]
    else:
        raise StoreError(f"the store answered select-match-keys as {media}, not CSV or JSON results")


__all__ = ["LEXICON", "Hit", "Lexicon", "scan_form", "store_lexicon"]
