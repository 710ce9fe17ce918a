"""Profiles of our side of a section, for bench/ANALYSIS.md (pyinstrument, statistical).

    python -m bench.profile NAME [--out bench/out/profiles]

NAME is one of: load, lookup, decide, annotate, ask. Each runs the same worker or command the
section times, on the stores a previous ``python -m bench.run`` left under bench/out/, under
``pyinstrument`` (text and HTML renderings written to bench/out/profiles/NAME.{txt,html}).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from bench.measure import PY, ROOT, shell_line

OUT = ROOT / "bench" / "out"


def targets(shared: Path) -> dict[str, list[str]]:
    st = OUT / "stores"
    return {
        "load": ["-m", "bench.work_load", str(OUT / "profiles" / "load-store"),
                 str(shared / "wordnet" / "english-wordnet-2025.xml.gz")],
        "lookup": ["-m", "bench.work_lookup", str(st / "oewn"), str(OUT / "lookup" / "lemmas.txt")],
        "decide": ["-m", "bench.work_decide", str(st / "lex"), str(OUT / "decide" / "sentences.jsonl"), "300"],
        "annotate": [str(Path(PY).parent / "kg-rag"), "--store", str(OUT / "profiles" / "annotate-store"),
                     "index", str(OUT / "annotate" / "corpus.jsonl")],
        "ask": ["-m", "bench.work_ask", str(OUT / "profiles" / "ask-store"),
                str(OUT / "docs" / "questions.jsonl"), "10"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.profile")
    p.add_argument("name", choices=["load", "lookup", "decide", "annotate", "ask"])
    p.add_argument("--out", default=str(OUT / "profiles"), help="where the profile is written")
    p.add_argument("--shared", default="../shared/data")
    args = p.parse_args(argv)
    prof = Path(args.out)
    prof.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(prof / f"{args.name}-store", ignore_errors=True)
    if args.name == "annotate":
        shutil.copytree(OUT / "stores" / "lex", prof / "annotate-store")
    if args.name == "ask":
        shutil.copytree(OUT / "docs" / "store", prof / "ask-store")
    t = targets(Path(args.shared).resolve())[args.name]
    out = prof / f"{args.name}.txt"
    cmd = [PY, "-m", "pyinstrument", "-r", "text", "-o", str(out), *t]
    print(shell_line(cmd), file=sys.stderr)
    r = subprocess.run(cmd, cwd=ROOT)
    shutil.rmtree(prof / f"{args.name}-store", ignore_errors=True)
    if r.returncode != 0:
        return r.returncode
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
