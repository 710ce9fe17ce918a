"""Where the time goes in a running process: py-spy samples, summarised as text.

    python -m bench.spy PID SECONDS OUT.txt

Samples the process (``py-spy record -f raw``, 50 Hz, no restart needed: attach to a long
``kg-rag index`` or ``serve`` while a section runs) and writes the functions with the largest
inclusive and self shares of the samples. Needs ptrace permission (root here).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from bench.measure import PY


def summarise(raw: Path, top: int = 30) -> str:
    leaf: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, n_s = line.rpartition(" ")
        n = int(n_s)
        total += n
        frames = stack.split(";")
        leaf[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
    out = [f"{total} samples", "", "inclusive:"]
    out += [f"{100 * n / total:5.1f}%  {f}" for f, n in incl.most_common(top)]
    out += ["", "self:"]
    out += [f"{100 * n / total:5.1f}%  {f}" for f, n in leaf.most_common(top // 2)]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    pid, seconds, out = argv
    raw = Path(out).with_suffix(".raw")
    spy = str(Path(PY).parent / "py-spy")
    subprocess.run([spy, "record", "--pid", pid, "-d", seconds, "-r", "50", "-f", "raw",
                    "-o", str(raw)], check=True, capture_output=True)
    Path(out).write_text(summarise(raw), encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
