"""The annotator's in-memory index of every match key in the store.

Built once from ONE query (``sparql/select-match-keys.rq``): (match key, language, owner IRI,
owner is a lexical entry?). Per language:

* single-word keys in a ``dict`` (key → key id) — looked up per token and per analysis
  (lemma, prefix-stripped stem) of a token;
* keys of several words or with punctuation (``fruit tree``, ``u.s.``, ``ג'ירפה``) in an
  Aho-Corasick automaton over their *scan form* padded with spaces (``" fruit tree "``), run
  once over the whole normalised text (:mod:`.tokenize`), so every hit lies on word boundaries.

Keys without a language tag (thesaurus labels) are kept under ``""`` and match in every
language. Owner IRIs are interned once (key ids → owner ids in flat ``array``\\ s), so OEWN with
the OMW lexicons stays within a few hundred MB at most.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import time
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import ahocorasick

from .. import queries
from ..errors import StoreError
from ..store import Store
from ..text import base_language
from .tokenize import WORD

log = logging.getLogger(__name__)


def scan_form(key: str) -> str:
    """The key as it appears in the scan text: every non-word character becomes a space."""
    out = []
    last = 0
    for m in WORD.finditer(key):
        out.append(" " * (m.start() - last))
        out.append(m.group())
        last = m.end()
    out.append(" " * (len(key) - last))
    return "".join(out)


def _is_single_word(key: str) -> bool:
    m = WORD.fullmatch(key)
    return m is not None


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

    def __init__(self, rows: Iterable[tuple[str, str, str, bool]], version: str = "") -> None:
        """``rows``: (match key, language tag, owner IRI, owner is a lexical entry)."""
        t0 = time.perf_counter()
        self.version = version
        self.targets: list[str] = []          # owner id → IRI
        self.is_entry = bytearray()           # owner id → 1 for a lexical entry
        tid_of: dict[str, int] = {}
        grouped: dict[tuple[str, str], list[int]] = {}
        for key, lang, target, entry in rows:
            if not key:
                continue
            tid = tid_of.get(target)
            if tid is None:
                tid = tid_of[target] = len(self.targets)
                self.targets.append(target)
                self.is_entry.append(1 if entry else 0)
            grouped.setdefault((base_language(lang), key), []).append(tid)
        del tid_of
        self.keys: list[str] = []              # key id → key (shared strings, no copies)
        self._off = array("I", [0])            # key id → slice of _tids
        self._tids = array("I")
        self._langs: dict[str, _LangIndex] = {}
        self._alias: dict[int, list[int]] = {}  # key id → further key ids of the same scan form
        phrase_forms: dict[str, dict[str, int]] = {}
        for (lang, key) in sorted(grouped):
            kid = len(self.keys)
            self.keys.append(key)
            tids = sorted(set(grouped[(lang, key)]))
            self._tids.extend(tids)
            self._off.append(len(self._tids))
            idx = self._langs.get(lang)
            if idx is None:
                idx = self._langs[lang] = _LangIndex()
            if _is_single_word(key):
                idx.words[key] = kid
            else:
                form = " " + scan_form(key) + " "
                seen = phrase_forms.setdefault(lang, {})
                if form in seen:
                    self._alias.setdefault(seen[form], []).append(kid)
                else:
                    seen[form] = kid
        del grouped
        for lang, forms in phrase_forms.items():
            a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for form, kid in forms.items():
                a.add_word(form, kid)
            a.make_automaton()
            self._langs[lang].automaton = a
            self._langs[lang].n_phrases = len(forms)
        self.build_seconds = time.perf_counter() - t0
        log.info("lexicon: %d keys, %d owners, %d languages in %.2fs", len(self.keys),
                 len(self.targets), len(self._langs), self.build_seconds)

    # --- building from a store ------------------------------------------------------------
    @classmethod
    def from_store(cls, store: Store) -> Lexicon:
        """Read every match key of ``store`` with one query."""
        version = cls.store_version(store)
        q = queries.get("select-match-keys")
        body, media = store.raw_query(q.text, "csv")
        return cls(_parse_rows(body, media), version=version)

    @staticmethod
    def store_version(store: Store) -> str:
        """A hash of the catalog (sources, checksums, load times) and of the match-key count:
        equal versions mean an equal lexicon, so callers may cache a lexicon by it."""
        h = hashlib.sha256()
        for row in store.select("select-catalog-state"):
            h.update("|".join(row[k].value if k in row else "" for k in ("g", "sha", "time", "triples")).encode())
            h.update(b"\n")
        rows = store.select("select-match-key-count")
        h.update(("n=" + (rows[0]["n"].value if rows and "n" in rows[0] else "0")).encode())
        return h.hexdigest()[:16]

    # --- lookups ----------------------------------------------------------------------------
    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted(self._langs))

    def __len__(self) -> int:
        return len(self.keys)

    def _indexes(self, lang: str) -> list[_LangIndex]:
        out = []
        idx = self._langs.get(lang)
        if idx is not None:
            out.append(idx)
        if lang:
            untagged = self._langs.get("")
            if untagged is not None:
                out.append(untagged)
        return out

    def word(self, lang: str, form: str) -> list[int]:
        """Key ids of the single word ``form`` (a match key) in ``lang`` (and untagged)."""
        out = []
        for idx in self._indexes(lang):
            kid = idx.words.get(form)
            if kid is not None:
                out.append(kid)
        return out

    def lookup(self, lang: str, key: str) -> list[int]:
        """Key ids of any match key (one word or several)."""
        if _is_single_word(key):
            return self.word(lang, key)
        form = " " + scan_form(key) + " "
        out: list[int] = []
        for idx in self._indexes(lang):
            if idx.automaton is not None:
                kid = idx.automaton.get(form, -1)
                if kid >= 0:
                    out.extend(k for k in [kid, *self._alias.get(kid, ())] if self.keys[k] == key)
        return out

    def has_phrases(self, lang: str) -> bool:
        return any(idx.automaton is not None for idx in self._indexes(lang))

    def phrase_prefix(self, lang: str, prefix: str) -> bool:
        """Is ``" " + prefix`` the start of some multiword key's scan form?"""
        probe = " " + prefix
        return any(idx.automaton is not None and idx.automaton.match(probe)
                   for idx in self._indexes(lang))

    def phrase_exact(self, lang: str, words: str) -> list[int]:
        """Key ids whose scan form is exactly the space-joined ``words``."""
        form = " " + words + " "
        out: list[int] = []
        for idx in self._indexes(lang):
            if idx.automaton is not None:
                kid = idx.automaton.get(form, -1)
                if kid >= 0:
                    out.append(kid)
                    out.extend(self._alias.get(kid, ()))
        return out

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
            "entries": sum(self.is_entry),
            "languages": len(self._langs),
            "phrases": sum(i.n_phrases for i in self._langs.values()),
        }


def _parse_rows(body: bytes, media: str) -> Iterator[tuple[str, str, str, bool]]:
    if "csv" in media:
        reader = csv.reader(io.StringIO(body.decode("utf-8")))
        head = next(reader, None)
        if head != ["key", "lang", "target", "entry"]:
            raise StoreError(f"select-match-keys answered with unexpected columns {head}")
        for key, lang, target, entry in reader:
            yield key, lang, target, entry == "true"
    elif "json" in media:
        data = json.loads(body)
        for b in data["results"]["bindings"]:
            yield (b["key"]["value"], b.get("lang", {}).get("value", ""), b["target"]["value"],
                   b.get("entry", {}).get("value") == "true")
    else:
        raise StoreError(f"the store answered select-match-keys as {media}, not CSV or JSON results")


__all__ = ["Hit", "Lexicon", "scan_form"]
