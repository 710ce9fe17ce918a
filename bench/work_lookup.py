"""Our worker for ``lookup``: candidate senses with definitions for each lemma, through the API.

    python -m bench.work_lookup STORE LEMMAS [LANG]

Per lemma: the candidate senses the annotator offers for the lemma, then their definitions with
:func:`kg_rag.pipeline.evidence.fetch_evidence` (what a selector receives). The candidate API is
the first that exists of: ``LexiconAnnotator.candidates_for_lemma``, the annotator's
``candidates.lemma_readings``, the evaluation's ``LemmaSenses`` — the one used is reported. The
annotator's ``warm_up`` (when it has one: lexicon, lemma and evidence indexes — read from the
cache folder, or built there by the first process after a load) is part of the open time.
Prints one JSON line with per-lemma latencies.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.model import Candidate
from kg_rag.text.normalise import match_key


def candidate_api(kg: KnowledgeGraph, lang: str) -> tuple[str, Callable[[str], tuple[Candidate, ...]]]:
    ann = kg.annotator
    if hasattr(ann, "candidates_for_lemma"):
        return "LexiconAnnotator.candidates_for_lemma", lambda w: tuple(ann.candidates_for_lemma(w, lang))
    try:
        from kg_rag.annotate.candidates import lemma_readings

        def via_readings(w: str) -> tuple[Candidate, ...]:
            return tuple(r.candidate(lang, "lemma", w) for r in lemma_readings(kg.store, match_key(w), lang))

        return "annotate.candidates.lemma_readings", via_readings
    except ImportError:
        pass
    from kg_rag.eval.wsd import LemmaSenses

    ls = LemmaSenses(kg.store)
    return "eval.wsd.LemmaSenses", lambda w: ls(w, lang, None)


def main(argv: list[str]) -> int:
    store, lemma_file, *rest = argv
    lang = rest[0] if rest else "en"
    from kg_rag.pipeline.evidence import fetch_evidence

    lemmas = [x for x in Path(lemma_file).read_text(encoding="utf-8").splitlines() if x]
    t0 = time.perf_counter()
    kg = KnowledgeGraph.open(path=store)
    api, cands_of = candidate_api(kg, lang)
    warm = getattr(kg.annotator, "warm_up", None)
    if callable(warm):  # the lexicon and the lemma/evidence indexes (built once per catalog version)
        warm()
    t_open = time.perf_counter() - t0
    lat: list[float] = []
    senses = defs = 0
    t1 = time.perf_counter()
    for lemma in lemmas:
        a = time.perf_counter()
        cands = cands_of(lemma)
        if cands:
            for ev in fetch_evidence(kg.store, cands):
                senses += 1
                if ev.definitions:
                    defs += 1
        lat.append(time.perf_counter() - a)
    total = time.perf_counter() - t1
    kg.close()
    print(json.dumps({"open_s": t_open, "total_s": total, "latencies": lat, "senses": senses,
                      "definitions": defs, "lemmas": len(lemmas), "api": api}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
