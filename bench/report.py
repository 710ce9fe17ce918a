"""The Markdown report (bench/REPORT.md): a summary table of targets, then one part per section."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import ROOT, Run, Stat


@dataclass(slots=True)
class Target:
    what: str
    ours: str
    peer: str
    ratio: str
    target: str
    met: bool | None          # None: not measured
    note: str = ""
    shown: str = ""           # the verdict as an earlier report printed it (read_sections)

    @property
    def verdict(self) -> str:
        if self.shown:
            return self.shown
        if self.met is None:
            return "not measured" + (f": {self.note}" if self.note else "")
        if self.target == "report":
            return "reported"
        return "met" if self.met else "**MISSED**"


@dataclass(slots=True)
class Section:
    name: str
    title: str
    scale: str = ""
    lines: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    measured: str = ""        # when and by which command line (sections may come from several runs)
    raw: bool = False         # read back from an earlier report: ``lines`` are its body verbatim

    def to_json(self) -> dict[str, object]:
        d = {f: getattr(self, f) for f in self.__slots__}  # type: ignore[attr-defined]
        d["targets"] = [{f: getattr(t, f) for f in t.__slots__} for t in self.targets]  # type: ignore[attr-defined]
        return d

    @classmethod
    def from_json(cls, d: dict[str, object]) -> Section:
        targets = [Target(**t) for t in d.pop("targets")]  # type: ignore[arg-type,union-attr]
        sec = cls(**d)  # type: ignore[arg-type]
        sec.targets = targets
        return sec

    def say(self, *lines: str) -> None:
        self.lines.extend(lines)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c) for c in r) + " |")
        self.lines.append("")

    def command(self, *cmds: str) -> None:
        for c in cmds:
            if c not in self.commands:
                self.commands.append(c)

    def skip(self, reason: str, targets: Sequence[tuple[str, str]] = ()) -> None:
        """The section could not run; its targets are listed as not measured with the reason."""
        self.error = reason
        for what, target in targets:
            self.targets.append(Target(what, "—", "—", "—", target, None, reason))


def fmt_s(x: float) -> str:
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.2f} ms"
    return f"{x * 1e6:.0f} µs"


def fmt_ms(x: float) -> str:
    return fmt_s(x / 1000)


def fmt_stat(s: Stat, unit: str = "s") -> str:
    f = fmt_s if unit == "s" else fmt_ms
    if s.n == 1:
        return f(s.median)
    return f"{f(s.median)} ({f(s.lo)}–{f(s.hi)})"


def fmt_num(x: float, unit: str = "") -> str:
    if x >= 1e6:
        v = f"{x / 1e6:.2f} M"
    elif x >= 1e4:
        v = f"{x / 1e3:.1f} k"
    elif x >= 100:
        v = f"{x:.0f}"
    else:
        v = f"{x:.2f}"
    return f"{v}{unit}" if unit else v.strip()


def runs_table(sec: Section, runs: dict[str, list[Run]], extra: dict[str, str] | None = None) -> None:
    """Wall, CPU and peak memory per contender: median (min–max) over the repetitions."""
    rows = []
    for name, rs in runs.items():
        rows.append([name, fmt_stat(Stat.of([r.wall for r in rs])),
                     fmt_stat(Stat.of([r.cpu for r in rs])),
                     f"{Stat.of([r.rss_mb for r in rs]).hi:.0f} MB", len(rs),
                     (extra or {}).get(name, "")])
    sec.table(["contender", "wall median (min–max)", "CPU median (min–max)", "peak RSS (max)",
               "runs", "note"], rows)
    for name, rs in runs.items():
        sec.command(f"# {name}: " + rs[0].command)


def ratio_range(ours: Sequence[float], peer: Sequence[float]) -> tuple[float, float, float]:
    """Ratio of medians, and the range of per-repetition ratios (pairs run side by side)."""
    so, sp = Stat.of(ours), Stat.of(peer)
    pairs = [o / p for o, p in zip(ours, peer, strict=False) if p > 0]
    r = so.median / sp.median if sp.median > 0 else float("inf")
    return r, min(pairs, default=r), max(pairs, default=r)


def _x(v: float) -> str:
    return f"{v:.2f}" if v >= 0.01 or v == 0 else f"{v:.1e}"


def fmt_ratio(r: tuple[float, float, float]) -> str:
    m, lo, hi = r
    if lo == hi:
        return f"{_x(m)}×"
    return f"{_x(m)}× ({_x(lo)}–{_x(hi)})"


def cpu_model() -> str:
    """The machine's processor as /proc/cpuinfo names it ("?" where it does not): figures of
    sections measured on different machines are not comparable, so each section says its own."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def environment() -> list[str]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except OSError:
            return "?"

    try:
        import pyoxigraph
        oxv = pyoxigraph.__version__
    except (ImportError, AttributeError):
        oxv = "?"
    cpu = cpu_model()
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return [
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M UTC}; commit {git('rev-parse', '--short', 'HEAD')}"
        + (" (work tree has uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""),
        f"- machine: {os.cpu_count()} CPUs ({cpu}), load average at start {load}; "
        f"Python {platform.python_version()}, pyoxigraph {oxv}, {platform.system()} {platform.release()}",
    ]


def write(path: Path, sections: Sequence[Section], argv: Sequence[str], env_lines: Sequence[str],
          seconds: float) -> None:
    out: list[str] = [
        "# kg-rag benchmarks against peers",
        "",
        "Regenerated by `make bench` (`python -m bench.run`); do not edit by hand — the reading of the",
        "misses, with profiles, is in [ANALYSIS.md](ANALYSIS.md). All figures of one section were",
        "measured side by side in one run on the same machine, each contender in its own process,",
        "repetitions interleaved (ours, peer, ours, peer, …). Medians with min–max over repetitions;",
        "ratios are ours ÷ peer of the medians, with the range of the per-repetition ratios.",
        "CPU time is user + system of the child process; peak memory is its maximum resident set.",
        "A run with `--only` replaces those sections and keeps the others from earlier runs: each",
        "section says when, on which processor and by which command it was measured.",
        "",
        *env_lines,
        f"- last run: `{' '.join(argv)}` ({seconds / 60:.1f} min)",
        "",
        "## Targets",
        "",
        "| section | what | ours | peer | ratio | target | verdict | scale |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in sections:
        for t in s.targets:
            out.append(f"| {s.name} | {t.what} | {t.ours} | {t.peer} | {t.ratio} | {t.target} | "
                       f"{t.verdict} | {s.scale or '—'} |")
    out.append("")
    for s in sections:
        out.append(f"## {s.name}: {s.title}")
        out.append("")
        if s.raw:
            out.extend(s.lines)
            continue
        if s.measured:
            out.append(f"Measured {s.measured}.")
            out.append("")
        if s.scale:
            out.append(f"Scale: {s.scale}. Section time {s.seconds / 60:.1f} min.")
            out.append("")
        if s.error:
            out.append(f"Not run: {s.error}")
            out.append("")
        out.extend(s.lines)
        if s.lines and s.lines[-1] != "":
            out.append("")
        if s.commands:
            out.append("Reproduce (from the project folder; the child commands need the files the "
                       "section builds under `bench/out/`):")
            out.append("")
            out.append("```sh")
            out.extend(s.commands)
            out.append("```")
            out.append("")
    path.write_text("\n".join(out), encoding="utf-8")


def read_sections(path: Path, names: Sequence[str]) -> dict[str, Section]:
    """The sections ``names`` of an earlier report at ``path``, verbatim (targets and body), for a
    ``--only`` run that has no recorded state of them: a report is never shortened by rerunning
    one section on a machine that did not run the others."""
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8").split("\n")
    out: dict[str, Section] = {}
    rows: dict[str, list[list[str]]] = {}
    in_targets = False
    current: Section | None = None
    for line in text:
        if line.startswith("## "):
            in_targets = line.strip() == "## Targets"
            name, _, title = line[3:].partition(": ")
            current = None
            if name in names and not in_targets:
                current = out[name] = Section(name=name, title=title, raw=True)
            continue
        if in_targets and line.startswith("| ") and not line.startswith(("| section |", "|---")):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if len(cells) == 8 and cells[0] in names:
                rows.setdefault(cells[0], []).append(cells)
        elif current is not None:
            current.lines.append(line)
    for name, sec in out.items():
        while sec.lines and not sec.lines[-1].strip():
            sec.lines.pop()
        while sec.lines and not sec.lines[0].strip():
            sec.lines.pop(0)
        sec.lines.append("")
        for c in rows.get(name, []):
            sec.targets.append(Target(c[1], c[2], c[3], c[4], c[5], None, shown=c[6]))
            sec.scale = c[7] if c[7] != "—" else ""
    return out
