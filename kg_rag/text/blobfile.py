"""Sorted, NUL-separated tables kept in the cache folder.

The lemmatiser's decoded dictionaries (:mod:`.lemmatiser`) and the gloss words already
lemmatised (:mod:`.gloss_cache`) are kept in one layout: a first line ``MAGIC size size …`` with
the byte length of each part, then the parts. A part of strings is NUL-separated, in sorted order
when it is a table's keys. :class:`Entries` reads such a part without an object per entry —
where each entry starts is found by one vectorised scan, and a key is found by bisection over
slices of the blob — so reading a table of a million keys takes milliseconds.
"""

from __future__ import annotations

import logging
import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SEP = b"\0"


class Entries:
    """The NUL-separated entries of ``blob``: entry ``i`` is ``blob[at[i]:at[i + 1] - 1]``."""

    __slots__ = ("_at", "_blob")

    def __init__(self, blob: bytes) -> None:
        self._blob = blob
        nul = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
        at = np.empty(len(nul) + 2, dtype=np.uint32)
        at[0], at[1:-1], at[-1] = 0, nul + 1, len(blob) + 1
        self._at = array("I")   # (an array's items index faster from Python than a numpy array's)
        self._at.frombytes(at.tobytes())

    def __len__(self) -> int:
        return len(self._at) - 1 if self._blob else 0

    def __getitem__(self, i: int) -> bytes:
        return self._blob[self._at[i]:self._at[i + 1] - 1]

    def __iter__(self) -> Iterator[bytes]:
        return (self[i] for i in range(len(self)))

    def find(self, key: bytes) -> int | None:
        """The index of ``key`` in entries sorted in byte order, or None."""
        lo, hi = 0, len(self)
        while lo < hi:
            mid = (lo + hi) >> 1
            if self[mid] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < len(self) and self[lo] == key else None


def read_parts(path: Path, magic: bytes, count: int, what: str) -> list[bytes] | None:
    """The ``count`` parts of the file at ``path``; None — with a warning naming ``what`` —
    when it is of another layout, unreadable or not whole, and silently when there is none."""
    try:
        with open(path, "rb") as f:
            head = f.readline().split()
            if len(head) != count + 1 or head[0] != magic or not all(h.isdigit() for h in head[1:]):
                log.warning("ignoring the %s %s: not one this version wrote", what, path)
                return None
            sizes = [int(h) for h in head[1:]]
            parts = [f.read(n) for n in sizes]
            whole = [len(b) for b in parts] == sizes and not f.read(1)
    except FileNotFoundError:
        return None
    except OSError as e:
        log.warning("ignoring the unreadable %s %s (%s)", what, path, e)
        return None
    if not whole:
        log.warning("ignoring the truncated %s %s", what, path)
        return None
    return parts


def write_parts(path: Path, magic: bytes, parts: Sequence[bytes], what: str) -> bool:
    """Write ``parts`` to ``path`` atomically (a temporary file of its folder, then renamed:
    writers may race, a reader sees one whole file); False, with a warning naming ``what``,
    when the folder cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b" ".join([magic, *(b"%d" % len(b) for b in parts)]) + b"\n")
                for b in parts:
                    f.write(b)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        log.warning("could not write the %s %s: %s", what, path, e)
        return False
    return True


__all__ = ["SEP", "Entries", "read_parts", "write_parts"]
