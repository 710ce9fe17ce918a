"""simplemma's lemmatiser with its dictionaries kept decoded on disk.

simplemma ships each language's dictionary LZMA-compressed and front-coded; decoding one into a
``dict`` is pure Python, 0.06 s (Hebrew) to 0.9 s (Russian) in every new process, and indexing a
multilingual corpus decodes six of them (every language of the candidates' evidence texts). The
decoded dictionary is written once under ``Settings.cache_dir`` as one file — a line with the
parts' lengths, the NUL-separated keys in the dictionary's own (sorted) order, the distinct
lemmas, and each key's lemma number; no pickles — and read back into a
:class:`SortedDictionary`: a lookup is a binary search of the sorted keys. simplemma's
strategies only ``get`` from a dictionary, so the lemmas are those of simplemma's own dictionaries
(``tests/unit/text/test_lemmatiser.py`` compares every entry of a language).

:func:`lemmatize` is ``simplemma.lemmatize`` (same default strategy, tokenizer, fallback and cache
size) over these dictionaries.
"""

from __future__ import annotations

import logging
import os
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np
from simplemma import Lemmatizer
from simplemma.strategies.default import DefaultStrategy
from simplemma.strategies.dictionaries.dictionary_factory import (
    CachingDictionaryFactory,
    DecodedStrMapping,
    MappingStrToByteString,
    _load_dictionary_from_disk,
)

log = logging.getLogger(__name__)

#: bumped when the file layout changes
CACHE_FORMAT = 1
_SEP = b"\0"
#: the file's first line: this, then the byte lengths of its three parts
_MAGIC = b"kg-rag-simplemma-dictionary"


class SortedDictionary(DecodedStrMapping):
    """A simplemma dictionary as its sorted keys, its distinct values and each key's value
    number (bytes; lemmas recur, each is held once), looked up by bisection."""

    __slots__ = ("_keys", "_lemmas", "_which")

    def __init__(self, keys: Sequence[bytes], lemmas: Sequence[bytes], which: array[int]) -> None:
        # tuples of bytes: the garbage collector stops tracking them (lists of a million keys
        # would be walked by every full collection, 48 ms for six languages' dictionaries)
        self._keys = tuple(keys)
        self._lemmas = tuple(lemmas)
        self._which = which

    def _lookup(self, key: str) -> str | None:
        k = key.encode()
        i = bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            lemma: bytes = self._lemmas[self._which[i]]
            return lemma.decode()
        return None

    def __iter__(self) -> Iterator[str]:
        return (k.decode() for k in self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def cache_path(lang: str, cache_dir: str | Path | None = None) -> Path:
    """Where the decoded dictionary of ``lang`` is kept (per simplemma version and file layout)."""
    if cache_dir is None:
        from kg_rag.settings import settings

        cache_dir = settings().cache_dir
    return Path(cache_dir) / f"simplemma-{version('simplemma')}-{CACHE_FORMAT}" / f"{lang}.bin"


def read_cached(path: Path) -> SortedDictionary | None:
    """The dictionary kept at ``path``; None when there is none or it cannot be read whole."""
    if not path.is_file():
        return None
    try:
        with open(path, "rb") as f:
            head = f.readline().split()
            if len(head) != 4 or head[0] != _MAGIC or not all(h.isdigit() for h in head[1:]):
                log.warning("ignoring the lemma dictionary cache %s: not one this version wrote", path)
                return None
            sizes = [int(h) for h in head[1:]]
            parts = [f.read(n) for n in sizes]    # keys, distinct values, value numbers
            whole = [len(b) for b in parts] == sizes and not f.read(1)
    except OSError as e:
        log.warning("ignoring the unreadable lemma dictionary cache %s (%s)", path, e)
        return None
    if whole:
        keys = parts[0].split(_SEP)
        lemmas = parts[1].split(_SEP)
        which = array("I")   # (an array's items index a list faster than a numpy array's)
        whole = which.itemsize == 4 and len(parts[2]) % 4 == 0
        if whole:
            which.frombytes(parts[2])
            if sys.byteorder == "big":   # written little-endian
                which.byteswap()
            whole = len(which) == len(keys) and (
                not which or int(np.frombuffer(parts[2], dtype="<u4").max()) < len(lemmas))
    if not whole:
        log.warning("ignoring the truncated lemma dictionary cache %s", path)
        return None
    return SortedDictionary(keys, lemmas, which)


def write_cached(path: Path, decoded: dict[bytes, bytes]) -> bool:
    """Keep ``decoded`` at ``path``; False (nothing written) when it cannot be kept as sorted
    NUL-separated entries (unsorted keys, a NUL in an entry, an empty dictionary) or the
    folder cannot be written."""
    keys = list(decoded)
    if not keys or any(a >= b for a, b in zip(keys, keys[1:], strict=False)):
        return False
    numbers: dict[bytes, int] = {}
    which = np.fromiter((numbers.setdefault(v, len(numbers)) for v in decoded.values()),
                        dtype="<u4", count=len(keys))
    if any(_SEP in k for k in keys) or any(_SEP in v for v in numbers):
        return False
    parts = [_SEP.join(keys), _SEP.join(numbers), which.tobytes()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # one per writer: processes may race
        with open(tmp, "wb") as f:
            f.write(b" ".join([_MAGIC, *(b"%d" % len(b) for b in parts)]) + b"\n")
            for b in parts:
                f.write(b)
        os.replace(tmp, path)
    except OSError as e:
        log.warning("could not write the lemma dictionary cache %s: %s", path, e)
        return False
    return True


class CachedDictionaryFactory(CachingDictionaryFactory):
    """simplemma's shipped dictionaries, decoded once and then read from ``cache_dir`` (the
    settings' cache folder when None, looked up on first use)."""

    __slots__ = ("_cache_dir",)

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        super().__init__(cache_max_size=64)
        self._cache_dir = cache_dir

    def _get_dictionary_uncached(self, lang: str) -> Mapping[str, str]:
        path = cache_path(lang, self._cache_dir)
        kept = read_cached(path)
        if kept is not None:
            return kept
        decoded = _load_dictionary_from_disk(lang)   # ValueError for an unsupported language
        write_cached(path, decoded)
        return MappingStrToByteString(decoded)


_LEMMATIZER = Lemmatizer(lemmatization_strategy=DefaultStrategy(dictionary_factory=CachedDictionaryFactory()))


def lemmatize(token: str, lang: str) -> str:
    """``simplemma.lemmatize(token, lang=lang)``, with the dictionaries read from the cache."""
    return _LEMMATIZER.lemmatize(token, lang)


__all__ = ["CachedDictionaryFactory", "SortedDictionary", "cache_path", "lemmatize"]
