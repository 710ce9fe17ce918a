"""simplemma's lemmatiser with its dictionaries kept decoded on disk.

simplemma ships each language's dictionary LZMA-compressed and front-coded; decoding one into a
``dict`` is pure Python, 0.06 s (Hebrew) to 0.9 s (Russian) in every new process, and indexing a
multilingual corpus decodes six of them (every language of the candidates' evidence texts). The
decoded dictionary is written once under ``Settings.cache_dir`` as one file — a line with the
parts' lengths, the NUL-separated keys in the dictionary's own (sorted) order, the distinct
lemmas, and each key's lemma number; no pickles — and read back into a
:class:`SortedDictionary`: a lookup is a binary search of the sorted keys, which stay one blob. simplemma's
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
from collections.abc import Iterator, Mapping
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
    number, looked up by bisection. The keys and the values stay the NUL-separated blobs of the
    file, with the start of each entry found by one vectorised scan: reading a dictionary makes
    no object per entry (splitting Spanish's 824,000 keys into ``bytes`` took 0.06–0.6 s a
    process, the most inside a busy indexing process), and a lookup slices the one key it
    compares (~20 for the largest dictionary)."""

    __slots__ = ("_keys", "_key_at", "_lemmas", "_lemma_at", "_which")

    def __init__(self, keys: bytes, lemmas: bytes, which: array[int]) -> None:
        self._keys, self._key_at = keys, _starts(keys)
        self._lemmas, self._lemma_at = lemmas, _starts(lemmas)
        self._which = which

    def _key(self, i: int) -> bytes:
        return self._keys[self._key_at[i]:self._key_at[i + 1] - 1]

    def _lookup(self, key: str) -> str | None:
        k = key.encode()
        lo, hi = 0, len(self._key_at) - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            if self._key(mid) < k:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self._key_at) - 1 and self._key(lo) == k:
            n = self._which[lo]
            return self._lemmas[self._lemma_at[n]:self._lemma_at[n + 1] - 1].decode()
        return None

    def __iter__(self) -> Iterator[str]:
        return (self._key(i).decode() for i in range(len(self)))

    def __len__(self) -> int:
        return len(self._key_at) - 1


def _starts(blob: bytes) -> array[int]:
    """Where each NUL-separated entry of ``blob`` starts, and one past the end (as if a NUL
    ended the last): entry ``i`` is ``blob[at[i]:at[i + 1] - 1]``."""
    nul = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
    at = np.empty(len(nul) + 2, dtype=np.uint32)
    at[0], at[1:-1], at[-1] = 0, nul + 1, len(blob) + 1
    out = array("I")   # (an array's items index faster from Python than a numpy array's)
    out.frombytes(at.tobytes())
    return out


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
        kept = SortedDictionary(parts[0], parts[1], array("I"))
        which = kept._which
        whole = which.itemsize == 4 and len(parts[2]) % 4 == 0
        if whole:
            which.frombytes(parts[2])
            if sys.byteorder == "big":   # written little-endian
                which.byteswap()
            whole = len(which) == len(kept) and (
                not which or int(np.frombuffer(parts[2], dtype="<u4").max()) < len(kept._lemma_at) - 1)
    if not whole:
        log.warning("ignoring the truncated lemma dictionary cache %s", path)
        return None
    return kept


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
