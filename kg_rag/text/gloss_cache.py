"""The gloss words already lemmatised, kept between processes.

:func:`kg_rag.text.analyse.gloss_words` turns each token of a gloss into the lemma that gloss
overlap counts (or nothing: a stop word, a one-letter word). The knowledge selector reads the
definitions, examples, labels and translations of every candidate it meets, so a process that
indexes a corpus lemmatises tens of thousands of distinct gloss tokens (~25 µs each through
simplemma), and the next process does it again: ~10 % of ``kg-rag index`` (bench/ANALYSIS.md).

This module keeps those answers in one file of ``Settings.cache_dir``: (language, token) → lemma,
or nothing, sorted and NUL-separated like the lemmatiser's dictionaries (:mod:`.blobfile`),
read whole on first use and looked up by bisection. A process adds
what it lemmatised anew and, when that is at least :data:`MIN_NEW` tokens, writes the merged
table back when it exits (atomically; two processes writing at once lose one's additions, which
the next run lemmatises again). Short processes (one ``ask``) read it and write nothing.

The answers are a pure function of simplemma's version, its dictionaries, the gloss stop lists
and the code that turns a token into its lemma, so the file's name carries a digest of all of
them (:func:`digest`: the files of :mod:`kg_rag.text` and simplemma's version, as the knowledge
selector's agent version hashes them): any change to one of them starts a new file, never a
stale answer.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import threading
from bisect import bisect_left
from collections.abc import Callable
from functools import cache
from pathlib import Path

from kg_rag.resources import code_digest
from kg_rag.text.blobfile import SEP, read_parts, write_parts

log = logging.getLogger(__name__)

#: bumped when the file layout changes
FORMAT = 1
#: the fewest new tokens worth writing the table back for
MIN_NEW = 1_000
_MAGIC = b"kg-rag-gloss-words"
_WHAT = "gloss word cache"
_KEY_SEP = "\x1f"
#: a stored "no lemma" (a gloss word's lemma has two letters or more, never this)
_NONE = b""
#: what :meth:`GlossCache.get` answers for a token it does not hold
MISSING = object()


@cache
def digest() -> str:
    """A hash of everything a stored answer depends on: this layout and the files of
    :mod:`kg_rag.text` (the code that computes the answers, its stop-word lists) with the
    lemmatiser's version (:func:`kg_rag.resources.code_digest`)."""
    h = hashlib.sha256(f"format {FORMAT}\x1e{code_digest(('kg_rag.text',))}".encode())
    return h.hexdigest()[:16]


def cache_path(cache_dir: str | Path | None = None) -> Path:
    """Where the table is kept (``cache_dir`` None: the settings' cache folder)."""
    if cache_dir is None:
        from kg_rag.settings import settings

        cache_dir = settings().cache_dir
    return Path(cache_dir) / f"gloss-words-{digest()}.bin"


class GlossCache:
    """(language, token) → lemma or None: the table read from ``path`` plus what this process
    added (:meth:`put`); :meth:`save` writes them merged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # split into objects, unlike the lemmatiser's dictionaries (:class:`.blobfile.Entries`):
        # the table is small (~100,000 keys, 10 ms to split) and a process looks up tens of
        # thousands of them, where a tuple's bisection is 15× faster than slicing the blob
        self._keys: tuple[bytes, ...] = ()
        self._values: tuple[bytes, ...] = ()
        self.new: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._read()

    def __len__(self) -> int:
        return len(self._keys) + len(self.new)

    def get(self, token: str, lang: str) -> str | None | object:
        """The stored answer for ``token`` in ``lang``, or :data:`MISSING`."""
        key = lang + _KEY_SEP + token
        hit = self.new.get(key, MISSING)
        if hit is not MISSING:
            return hit
        k = key.encode()
        i = bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            v = self._values[i]
            return None if v == _NONE else v.decode()
        return MISSING

    def put(self, token: str, lang: str, value: str | None) -> None:
        with self._lock:
            self.new[lang + _KEY_SEP + token] = value

    def _read(self) -> None:
        parts = read_parts(self.path, _MAGIC, 2, _WHAT)
        if parts is None:
            return
        # (unsorted keys cannot give a wrong answer: a lookup compares the key it lands on)
        keys = parts[0].split(SEP) if parts[0] else []
        values = parts[1].split(SEP) if keys else []
        if len(keys) != len(values) or (not keys and parts[1]):
            log.warning("ignoring the damaged %s %s", _WHAT, self.path)
            return
        self._keys, self._values = tuple(keys), tuple(values)

    def save(self, min_new: int = MIN_NEW) -> bool:
        """Write the table with this process's additions merged in, when there are at least
        ``min_new`` of them; False when nothing was written (too few, or the folder cannot be
        written: a warning)."""
        with self._lock:
            if len(self.new) < max(1, min_new):
                return False
            merged = dict(zip(self._keys, self._values, strict=True))
            for k, v in self.new.items():
                kb = k.encode()
                if SEP in kb or (v is not None and "\0" in v):
                    continue
                merged[kb] = _NONE if v is None else v.encode()
            keys = sorted(merged)
            values = [merged[k] for k in keys]
            if not write_parts(self.path, _MAGIC, [SEP.join(keys), SEP.join(values)], _WHAT):
                return False
            self._keys, self._values, self.new = tuple(keys), tuple(values), {}
            return True


_OPEN: dict[str, GlossCache] = {}
_OPEN_LOCK = threading.Lock()


def opened(cache_dir: str | Path | None = None,
           at_exit: Callable[[Callable[[], object]], object] = atexit.register) -> GlossCache:
    """The process's table for ``cache_dir`` (read on first use); the first call of a process
    arranges for it to be written back when the process exits (only by that process: forked
    workers leave without running exit handlers, and their additions stay theirs)."""
    path = cache_path(cache_dir)
    with _OPEN_LOCK:
        cache = _OPEN.get(str(path))
        if cache is None:
            cache = _OPEN[str(path)] = GlossCache(path)
            pid = os.getpid()
            at_exit(lambda: os.getpid() == pid and cache.save())
    return cache


__all__ = ["FORMAT", "MIN_NEW", "MISSING", "GlossCache", "cache_path", "digest", "opened"]
