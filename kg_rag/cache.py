"""A small thread-safe bounded LRU cache (the tables of :class:`kg_rag.derived.Derived`, the
knowledge selector's per-process caches), and :func:`give_back`, which returns the memory a
finished step freed to the system."""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Generic, TypeVar


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


def give_back() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``; nothing where there
    is none). Freed memory otherwise stays with the process: the engine's write buffers and the
    arrays of a long document's section, freed when the section is written, kept its resident
    set ~60 MB higher for the rest of the run (bench/ANALYSIS.md, the 1 MB text). Milliseconds:
    for the end of a step that freed a lot, not for a hot loop."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries (None: no count), the least recently used dropped first. ``lock``: the lock to
    hold (a registry shares its one lock with its tables); a new one when not given.

    ``budget`` and ``weigh``: also at most ``budget`` bytes, an entry weighing ``weigh(value)``
    (an estimate of what the entry holds on its own: its value, key and slot). A cache whose
    entries grow with the vocabulary a long text meets (a sense's vector, its gloss signature)
    is bounded by what it holds, not by how many: an entry count that fits one text's words
    is hundreds of megabytes for another's (bench/ANALYSIS.md, the 1 MB text)."""

    def __init__(self, size: int | None, lock: threading.Lock | threading.RLock | None = None,
                 budget: int | None = None, weigh: Callable[[V], int] | None = None) -> None:
        if (budget is None) != (weigh is None):
            raise ValueError("an LRU's byte budget needs its weigh function, and the other way round")
        self.size = size
        self.budget = budget
        self.weigh = weigh
        #: the weight of what is held (0 without a budget)
        self.bytes = 0
        self.data: OrderedDict[K, V] = OrderedDict()
        self.lock = lock if lock is not None else threading.Lock()

    def get(self, key: K) -> V | None:
        with self.lock:
            v = self.data.get(key)
            if v is not None:
                self.data.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> None:
        with self.lock:
            if self.weigh is not None:
                old = self.data.get(key)
                if old is not None:
                    self.bytes -= self.weigh(old)
                self.bytes += self.weigh(value)
            self.data[key] = value
            self.data.move_to_end(key)
            while (self.size is not None and len(self.data) > self.size) or (
                    self.budget is not None and self.bytes > self.budget and len(self.data) > 1):
                _, dropped = self.data.popitem(last=False)
                if self.weigh is not None:
                    self.bytes -= self.weigh(dropped)

    def split(self, keys: Iterable[K]) -> tuple[dict[K, V], list[K]]:
        """The cached values of ``keys`` and, in order and once each, the keys not cached."""
        hits: dict[K, V] = {}
        missing: list[K] = []
        for k in dict.fromkeys(keys):
            v = self.get(k)
            if v is None:
                missing.append(k)
            else:
                hits[k] = v
        return hits, missing

    def clear(self) -> None:
        with self.lock:
            self.data.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self.data)
