"""A small thread-safe bounded LRU cache (the tables of :class:`kg_rag.derived.Derived`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries, the least recently used dropped first. ``lock``: the lock to
    hold (a registry shares its one lock with its tables); a new one when not given."""

    def __init__(self, size: int, lock: threading.Lock | threading.RLock | None = None) -> None:
        self.size = size
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

    def clear(self) -> None:
        with self.lock:
            self.data.clear()

    def __len__(self) -> int:
        return len(self.data)
