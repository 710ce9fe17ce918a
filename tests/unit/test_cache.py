"""The bounded LRU of kg_rag.cache: by entries, and by bytes where a weight is given."""

from __future__ import annotations

import pytest

from kg_rag.cache import LRU


def test_an_entry_count_drops_the_least_recently_used() -> None:
    lru: LRU[str, int] = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1          # "a" is now the most recent
    lru.put("c", 3)
    assert lru.get("b") is None and lru.get("a") == 1 and lru.get("c") == 3


def test_a_byte_budget_bounds_what_is_held_not_how_many() -> None:
    lru: LRU[str, bytes] = LRU(None, budget=100, weigh=len)
    for k in "abcdef":
        lru.put(k, b"x" * 30)
    assert len(lru) == 3 and lru.bytes == 90
    assert [k for k in "abcdef" if lru.get(k) is not None] == ["d", "e", "f"]
    lru.put("g", b"y" * 100)          # one entry of the whole budget drops every other
    assert len(lru) == 1 and lru.bytes == 100
    lru.put("g", b"z" * 10)           # a replaced value's weight is given back
    assert lru.bytes == 10
    lru.clear()
    assert len(lru) == 0 and lru.bytes == 0


def test_an_entry_heavier_than_the_budget_is_still_held_alone() -> None:
    lru: LRU[str, bytes] = LRU(10, budget=5, weigh=len)
    lru.put("a", b"123456789")
    assert lru.get("a") == b"123456789"


def test_a_budget_needs_its_weight() -> None:
    with pytest.raises(ValueError, match="budget"):
        LRU(10, budget=5)
