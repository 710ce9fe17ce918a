"""Measuring child processes: wall time, CPU time and peak memory of exactly one child.

Every timed job runs in its own process so that its peak memory is its own: ``os.wait4`` returns
the resource usage of that child alone (``ru_maxrss`` in KiB on Linux, user + system CPU).
Jobs that measure latencies internally print one JSON object as the last line of stdout, which
is returned as :attr:`Run.out`.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent     # the project folder
PY = sys.executable


class BenchError(Exception):
    """A benchmark job failed; the message says which command and why."""


class Unavailable(BenchError):
    """What a section needs is not there (yet): the section is reported as not measured."""


@dataclass(slots=True)
class Run:
    argv: list[str]
    wall: float                  # seconds
    cpu: float                   # user + system seconds of the child
    rss_mb: float                # peak resident set of the child
    out: dict[str, Any] = field(default_factory=dict)
    stderr_tail: str = ""

    @property
    def command(self) -> str:
        return shell_line(self.argv)


def shell_line(argv: Sequence[str]) -> str:
    """The command as one shell line, relative to the project folder where possible."""
    parts = []
    for a in argv:
        if a == PY:
            a = ".venv/bin/python"
        elif a.startswith(str(ROOT) + "/"):
            a = os.path.relpath(a, ROOT)
        parts.append(shlex.quote(a))
    return " ".join(parts)


def run_child(argv: Sequence[str], env: Mapping[str, str] | None = None, timeout: float = 3600,
              stdin: bytes | None = None, check: bool = True) -> Run:
    """Run ``argv`` to the end; its wall time, CPU time and peak memory (this child only)."""
    full_env = dict(os.environ)
    full_env.setdefault("PYTHONHASHSEED", "0")
    if env:
        full_env.update(env)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as inp:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        t0 = time.perf_counter()
        p = subprocess.Popen(list(argv), stdout=out, stderr=err, stdin=inp, env=full_env, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                p.returncode = -9
                raise BenchError(f"timed out after {timeout:.0f} s: {shell_line(argv)}")
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    if check and p.returncode != 0:
        raise BenchError(f"exit {p.returncode}: {shell_line(argv)}\n{tail}")
    payload: dict[str, Any] = {}
    try:
        whole = json.loads(stdout)
        if isinstance(whole, dict):
            payload = whole
    except json.JSONDecodeError:
        pass
    for line in [] if payload else reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                payload = json.loads(line)
            except json.JSONDecodeError:
                continue
            break
    return Run(list(argv), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, payload, tail)


def worker(module: str, *args: str) -> list[str]:
    """argv running ``bench.<module>`` in a fresh interpreter."""
    return [PY, "-m", f"bench.{module}", *args]


# --- statistics --------------------------------------------------------------------------------

@dataclass(slots=True)
class Stat:
    median: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, xs: Sequence[float]) -> Stat:
        if not xs:
            raise BenchError("no measurements")
        return cls(statistics.median(xs), min(xs), max(xs), len(xs))


def percentile(xs: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100), linear interpolation between order statistics."""
    if not xs:
        raise BenchError("no measurements")
    s = sorted(xs)
    k = (len(s) - 1) * q / 100
    f = int(k)
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def interleaved(jobs: Mapping[str, Callable[[int], Run]], repeat: int,
                log: Callable[[str], None] = print) -> dict[str, list[Run]]:
    """Run each job ``repeat`` times, interleaved (a, b, c, a, b, c, ...) so that drifts in the
    machine's load hit every contender alike. ``jobs[name](i)`` runs repetition ``i``."""
    runs: dict[str, list[Run]] = {name: [] for name in jobs}
    for i in range(repeat):
        for name, job in jobs.items():
            r = job(i)
            log(f"    {name} #{i + 1}: {r.wall:.2f} s wall, {r.cpu:.2f} s CPU, {r.rss_mb:.0f} MB")
            runs[name].append(r)
    return runs


def dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += (Path(root) / f).stat().st_size
            except OSError:
                pass
    return total
