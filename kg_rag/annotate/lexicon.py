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
import os
import threading
import time
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ahocorasick
import numpy as np

from kg_rag.derived import Derived, Slot, catalog_version
from kg_rag.errors import StoreError
from kg_rag.store import Store, queries
from kg_rag.text.normalise import base_language
from kg_rag.text.tokenise import NON_WORD

log = logging.getLogger(__name__)

#: the disk cache's layout (bump when :meth:`Lexicon.save` changes)
CACHE_FORMAT = "lex-1"
#: small lexicons (tests, the demo) build in milliseconds: only large ones go to disk
DISK_CACHE_MIN_KEYS = 20_000


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
        self._pending: dict[str, tuple[int, int, list[int]]] = {}  # read from disk, not yet made
        self._lock = threading.Lock()
        keys, tids, off = self.keys, self._tids, self._off
        for lang, d in per_lang.items():
            idx = self._langs[lang] = _LangIndex()
            phrase_kids: list[int] = []
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
                    phrase_kids.append(kid)
            idx.words = d  # every key of the language (phrases too) → key id
            self._add_phrases(idx, phrase_kids)
        del per_lang
        self._idx_cache: dict[str, list[_LangIndex]] = {}
        self.build_seconds = time.perf_counter() - t0
        log.info("lexicon: %d keys, %d owners, %d languages in %.2fs", len(self.keys),
                 len(self.targets), len(self._langs), self.build_seconds)

    def _add_phrases(self, idx: _LangIndex, phrase_kids: list[int]) -> None:
        """The phrase automaton of one language over its multiword keys (``phrase_kids``, in key
        order): one entry per scan form; further keys of the same form are its aliases."""
        forms: dict[str, int] = {}
        for kid in phrase_kids:
            first = forms.setdefault(" " + NON_WORD.sub(" ", self.keys[kid]) + " ", kid)
            if first != kid:
                self._alias.setdefault(first, []).append(kid)
        if forms:
            auto = ahocorasick.Automaton(ahocorasick.STORE_INTS)
            for form, kid in forms.items():
                auto.add_word(form, kid)
            auto.make_automaton()
            idx.automaton = auto
            idx.n_phrases = len(forms)

    # --- the disk cache (kept beside the knowledge base's, keyed by the catalog version) ------
    def save(self, path: Path) -> bool:
        """Write the built index to ``path`` (an ``.npz`` of flat arrays, no pickles); False,
        writing nothing, when a key or IRI holds a newline (the file's separator)."""
        if any("\n" in k for k in self.keys) or any("\n" in t for t in self.targets):
            return False
        langs = list(self._all_langs())
        starts: list[int] = []
        ends: list[int] = []
        phrase_ptr = [0]
        phrase_kids: list[int] = []
        for lang in langs:
            idx = self._langs[lang]
            kids = idx.words.values()
            starts.append(min(kids, default=0))
            ends.append(max(kids, default=-1) + 1)
            phrase_kids += (kid for kid in kids if NON_WORD.search(self.keys[kid]) is not None)
            phrase_ptr.append(len(phrase_kids))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")  # one per writer: processes may race
        np.savez(tmp, format=np.asarray([CACHE_FORMAT]), version=np.asarray([self.version]),
                 keys=_pack(self.keys), targets=_pack(self.targets), langs=_pack(langs),
                 lang_start=np.asarray(starts, dtype=np.int64), lang_end=np.asarray(ends, dtype=np.int64),
                 off=np.frombuffer(self._off, dtype=np.uint32), tids=np.frombuffer(self._tids, dtype=np.uint32),
                 phrase_ptr=np.asarray(phrase_ptr, dtype=np.int64),
                 phrase_kids=np.asarray(phrase_kids, dtype=np.int64))
        os.replace(tmp, path)
        return True

    @classmethod
    def read(cls, path: Path) -> Lexicon:
        """The lexicon :meth:`save` wrote (``OSError``/``ValueError``/``KeyError`` when the file is
        unreadable or of another format)."""
        t0 = time.perf_counter()
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"][0]) != CACHE_FORMAT:
                raise ValueError(f"cache format {z['format'][0]}, not {CACHE_FORMAT}")
            self = cls.__new__(cls)
            self.version = str(z["version"][0])
            self.keys = _unpack(z["keys"])
            self.targets = _unpack(z["targets"])
            self._off = array("I", z["off"].astype(np.uint32).tobytes())
            self._tids = array("I", z["tids"].astype(np.uint32).tobytes())
            langs = _unpack(z["langs"])
            lang_start, lang_end = z["lang_start"].tolist(), z["lang_end"].tolist()
            phrase_ptr, phrase_kids = z["phrase_ptr"].tolist(), z["phrase_kids"].tolist()
        if len(self._off) != len(self.keys) + 1:
            raise ValueError("the cached lexicon is inconsistent (keys and offsets differ)")
        self._langs = {}
        self._alias = {}
        # each language's index is made on first use (a question in English never builds the
        # French automaton): :meth:`_lang`
        self._lock = threading.Lock()
        self._pending = {lang: (lang_start[i], lang_end[i], phrase_kids[phrase_ptr[i] : phrase_ptr[i + 1]])
                         for i, lang in enumerate(langs)}
        self._idx_cache = {}
        self.build_seconds = time.perf_counter() - t0
        log.info("lexicon read from %s: %d keys in %.2fs", path, len(self.keys), self.build_seconds)
        return self

    def _lang(self, lang: str) -> _LangIndex | None:
        """The index of ``lang`` (made now from the disk cache's arrays if it was read)."""
        idx = self._langs.get(lang)
        if idx is not None or lang not in self._pending:
            return idx
        with self._lock:
            return self._make_lang(lang)

    def _make_lang(self, lang: str) -> _LangIndex | None:
        if lang not in self._pending:  # another thread made it meanwhile
            return self._langs.get(lang)
        a, b, phrase_kids = self._pending[lang]
        keys = self.keys
        idx = _LangIndex()
        idx.words = dict(zip(keys[a:b], range(a, b), strict=True))
        self._add_phrases(idx, phrase_kids)
        self._langs[lang] = idx
        del self._pending[lang]
        return idx

    def _all_langs(self) -> dict[str, _LangIndex]:
        for lang in list(self._pending):
            self._lang(lang)
        return self._langs

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
        return tuple(sorted(set(self._langs) | set(self._pending)))

    def __len__(self) -> int:
        return len(self.keys)

    def _indexes(self, lang: str) -> list[_LangIndex]:
        cached = self._idx_cache.get(lang)
        if cached is not None:
            return cached
        out = []
        idx = self._lang(lang)
        if idx is not None:
            out.append(idx)
        if lang:
            untagged = self._lang("")
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
            "languages": len(self._all_langs()),
            "phrases": sum(i.n_phrases for i in self._all_langs().values()),
        }


#: the lexicon, in the store's registry
LEXICON: Slot[Lexicon] = Slot("lexicon")


def store_lexicon(store: Store) -> Lexicon:
    """The lexicon of ``store`` from its registry (built once per catalog version); a large one
    (≥ :data:`DISK_CACHE_MIN_KEYS`) is kept on disk under ``Settings.cache_dir`` as well, so the
    next process reads it instead of querying every match key again."""
    derived = Derived.of(store)
    return derived.value(LEXICON, lambda: _load(store, derived))


def cache_path(derived: Derived) -> Path:
    """The disk cache file of the lexicon of ``derived``'s store (its catalog version)."""
    return derived.cache_file(f"lexicon-{CACHE_FORMAT}", ".npz")


def _load(store: Store, derived: Derived) -> Lexicon:
    path = cache_path(derived)
    if path.is_file():
        try:
            return Lexicon.read(path)
        except (OSError, ValueError, KeyError, IndexError) as e:
            log.warning("ignoring the unreadable lexicon cache %s (%s); rebuilding it", path, e)
    lex = Lexicon.from_store(store, derived.version())
    if len(lex) >= DISK_CACHE_MIN_KEYS:
        try:
            lex.save(path)
        except OSError as e:
            log.warning("could not write the lexicon cache %s: %s", path, e)
    return lex


def _pack(strings: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(strings).encode("utf-8"), dtype=np.uint8)


def _unpack(arr: np.ndarray) -> list[str]:
    return bytes(arr).decode("utf-8").split("\n") if arr.size else []


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
