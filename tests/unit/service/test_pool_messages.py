"""The pipe messages between the query pool and its children (kg_rag/service/sandbox.py
``send`` / ``read_message``): a report is read whole however it is split; more than one at
once is not an answer; a child that dies half way, sends too much or nothing at all is told
apart; a job the child does not take is given up at the deadline."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator

import pytest

from kg_rag.service import sandbox
from kg_rag.service.worker import QueryAnswer, QueryCrashed, decode


def _report(body: bytes) -> bytes:
    return json.dumps({"ok": True, "truncated": False, "length": len(body)}).encode() + b"\n" + body


class Pipe:
    """A pipe whose ends the test may close early (each end is closed once)."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        self.open = {self.r, self.w}

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.open.discard(fd)
            os.close(fd)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    p = Pipe()
    yield p
    for fd in list(p.open):
        p.close(fd)


def _drip(w: int, data: bytes, step: int) -> threading.Thread:
    def run() -> None:
        for i in range(0, len(data), step):
            os.write(w, data[i:i + step])
            time.sleep(0.001)

    th = threading.Thread(target=run)
    th.start()
    return th


@pytest.mark.parametrize("step", [1, 7, 1 << 16])
def test_a_report_is_read_whole_however_it_arrives(pipe: Pipe, step: int) -> None:
    r, w = pipe.r, pipe.w
    body = "שלום\n".encode() * 300
    for _ in range(2):   # a child answers job after job on the same pipe
        th = _drip(w, _report(body), step)
        data, how = sandbox.read_message(r, 30, 1 << 20)
        th.join()
        assert how == "done" and decode(data, "json", 0) == QueryAnswer(body, "json", False)


def test_more_than_one_report_at_once_is_not_an_answer(pipe: Pipe) -> None:
    """A child sends one report per job and nothing else: what comes beyond the announced
    length is a broken child (the pool retires it on this error)."""
    r, w = pipe.r, pipe.w
    os.write(w, _report(b"one") + _report(b"two"))
    data, how = sandbox.read_message(r, 30, 1 << 20)
    assert how == "done"
    with pytest.raises(QueryCrashed):
        decode(data, "json", 0)


def test_an_error_report_has_no_body(pipe: Pipe) -> None:
    r, w = pipe.r, pipe.w
    os.write(w, json.dumps({"ok": False, "kind": "syntax", "message": "line 1"}).encode() + b"\n")
    data, how = sandbox.read_message(r, 30, 1 << 20)
    assert how == "done" and data.endswith(b"\n")


def test_death_half_way_size_and_silence_are_told_apart(pipe: Pipe) -> None:
    r, w = pipe.r, pipe.w
    os.write(w, _report(b"x" * 100)[:-10])
    assert sandbox.read_message(r, 0.2, 1 << 20)[1] == "late"
    pipe.close(w)
    data, how = sandbox.read_message(r, 30, 1 << 20)
    assert how == "eof" and data == b""       # the first call kept what had come
    other = Pipe()
    try:
        os.write(other.w, _report(b"x" * 5000))
        assert sandbox.read_message(other.r, 30, 1000)[1] == "large"
    finally:
        other.close(other.r)
        other.close(other.w)


def test_a_job_the_child_does_not_take_is_given_up(pipe: Pipe) -> None:
    r, w = pipe.r, pipe.w
    os.set_blocking(w, False)
    assert sandbox.send(w, b"x" * 1000, time.monotonic() + 5)
    assert not sandbox.send(w, b"x" * (1 << 20), time.monotonic() + 0.2)   # nobody reads
    pipe.close(r)
    with pytest.raises(BrokenPipeError):
        sandbox.send(w, b"x", time.monotonic() + 5)
