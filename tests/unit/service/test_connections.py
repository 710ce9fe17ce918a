"""The server's connection guards: the connection cap stays below the open-file limit, and
repeated identical log lines are held back and counted."""

from __future__ import annotations

import logging
import resource

import pytest

from kg_rag.service.connections import RepeatFilter, connection_limit


def test_the_connection_cap_stays_below_the_open_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resource, "getrlimit", lambda _: (1024, 4096))
    assert connection_limit(5000) == 1024 - 64
    assert connection_limit(100) == 100
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert connection_limit(5000) == 5000


def test_repeated_log_lines_are_held_back_and_counted() -> None:
    f = RepeatFilter(every=60)

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.WARNING, __file__, 1, msg, None, None)

    assert f.filter(record("Invalid HTTP request received."))
    assert not any(f.filter(record("Invalid HTTP request received.")) for _ in range(10_000))
    assert f.filter(record("another message"))       # other lines still pass
    f.every = 0
    r = record("Invalid HTTP request received.")
    assert f.filter(r) and "10000 more like it" in r.getMessage()
