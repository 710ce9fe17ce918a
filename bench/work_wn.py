"""Peer worker: the ``wn`` library (goodmami/wn) on the same WN-LMF file, offline.

    python -m bench.work_wn add FILE DATA_DIR          # wn.add() into a fresh SQLite database
    python -m bench.work_wn lookup DATA_DIR LEMMAS     # wn.senses(lemma) + definitions per lemma

Prints one JSON line with the figures. No network: ``wn.add`` is given a local file.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _configure(data_dir: str) -> None:
    import os

    os.environ["WN_DATA_DIR"] = data_dir
    import wn

    wn.config.data_directory = data_dir
    wn.config.allow_multithreading = False


def add(path: str, data_dir: str) -> dict[str, object]:
    _configure(data_dir)
    import wn

    t0 = time.perf_counter()
    wn.add(path, progress_handler=None)
    t1 = time.perf_counter()
    lex = [f"{x.id}:{x.version}" for x in wn.lexicons()]
    return {"seconds": t1 - t0, "lexicons": lex}


def lookup(data_dir: str, lemma_file: str) -> dict[str, object]:
    _configure(data_dir)
    import wn

    lemmas = [x for x in Path(lemma_file).read_text(encoding="utf-8").splitlines() if x]
    t0 = time.perf_counter()
    w = wn.Wordnet(lexicon=wn.lexicons()[0].specifier())
    t_open = time.perf_counter() - t0
    lat: list[float] = []
    senses = defs = 0
    t1 = time.perf_counter()
    for lemma in lemmas:
        a = time.perf_counter()
        for s in w.senses(lemma):
            senses += 1
            if s.synset().definition():
                defs += 1
        lat.append(time.perf_counter() - a)
    total = time.perf_counter() - t1
    return {"open_s": t_open, "total_s": total, "latencies": lat, "senses": senses,
            "definitions": defs, "lemmas": len(lemmas)}


def main(argv: list[str]) -> int:
    cmd, *args = argv
    if cmd == "add":
        res = add(*args)
    elif cmd == "lookup":
        res = lookup(*args)
    else:
        raise SystemExit(f"unknown command {cmd}")
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
