"""A small thread-safe LRU cache, and one per store (for facts that never change under an IRI:
concept evidence between loads, decisions — whose IRIs are content hashes)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[K, V] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self.lock:
            v = self.data.get(key)
            if v is not None:
                self.data.move_to_end(key)
            return v

    def put(self, key: K, value: V) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

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

    def __len__(self) -> int:
        return len(self.data)


class PerStore(Generic[K, V]):
    """One :class:`LRU` per store object (dropped with the store)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._caches: weakref.WeakKeyDictionary[object, LRU[K, V]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, store: object) -> LRU[K, V]:
        with self._lock:
            c = self._caches.get(store)
            if c is None:
                c = self._caches[store] = LRU(self.size)
            return c

    def clear(self, store: object) -> None:
        with self._lock:
            self._caches.pop(store, None)
