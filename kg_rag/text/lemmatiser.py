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

from kg_rag.text.blobfile import SEP, Entries, read_parts, write_parts

log = logging.getLogger(__name__)

#: bumped when the file layout changes
CACHE_FORMAT = 1
#: the file's first line: this, then the byte lengths of its three parts (:mod:`.blobfile`)
_MAGIC = b"kg-rag-simplemma-dictionary"
_WHAT = "lemma dictionary cache"


class SortedDictionary(DecodedStrMapping):
    """A simplemma dictionary as its sorted keys, its distinct values and each key's value
    number, looked up by bisection. The keys and the values stay the blobs of the file
    (:class:`~kg_rag.text.blobfile.Entries`): reading a dictionary makes no object per entry
    (splitting Spanish's 824,000 keys into ``bytes`` took 0.06–0.6 s a process, the most inside
    a busy indexing process)."""

    __slots__ = ("_keys", "_lemmas", "_which")

    def __init__(self, keys: bytes, lemmas: bytes, which: array[int]) -> None:
        self._keys, self._lemmas, self._which = Entries(keys), Entries(lemmas), which

    def _lookup(self, key: str) -> str | None:
        i = self._keys.find(key.encode())
        return None if i is None else self._lemmas[self._which[i]].decode()

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
    parts = read_parts(path, _MAGIC, 3, _WHAT)   # keys, distinct values, value numbers
    if parts is None:
        return None
    which = array("I")
    whole = which.itemsize == 4 and len(parts[2]) % 4 == 0
    if whole:
        kept = SortedDictionary(parts[0], parts[1], which)
        which.frombytes(parts[2])
        if sys.byteorder == "big":   # written little-endian
            which.byteswap()
        whole = len(which) == len(kept) and (
            not which or int(np.frombuffer(parts[2], dtype="<u4").max()) < len(kept._lemmas))
    if not whole:
        log.warning("ignoring the truncated %s %s", _WHAT, path)
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
    if any(SEP in k for k in keys) or any(SEP in v for v in numbers):
        return False
    return write_parts(path, _MAGIC, [SEP.join(keys), SEP.join(numbers), which.tobytes()], _WHAT)


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
