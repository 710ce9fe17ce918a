"""The indexed-document stores of ``grow`` and ``retrieve``, built once per run.

One corpus of the largest size is written; a copy of the ``lex`` store then indexes it in
stages (e.g. 10k, then 20k more, then 70k more at full scale) with ``kg-rag index``, measuring
each stage, its store size and ``ask`` latency. ``retrieve`` reuses the store of the last stage.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from bench.context import KG, Ctx
from bench.corpus import make_documents, make_questions
from bench.measure import BenchError, Run, dir_size, run_child, worker


@dataclass(slots=True)
class Stage:
    docs: int                 # documents in the store after this stage
    added: int
    index: Run                # the kg-rag index run of this stage
    store_bytes: int          # store size on disk after the stage
    ask: Run | None = None    # work_ask on the store after the stage


@dataclass(slots=True)
class Built:
    corpus: Path
    questions: Path
    store: Path               # the store after the last stage
    base_bytes: int           # the lex store's size before any document
    stages: list[Stage]


#: documents indexed (into a copy that is thrown away) before the first timed stage
WARM_UP = 10

#: how long a stage's ``kg-rag index`` may take, per document (at least an hour): ~5× the
#: ~45 ms a document measured at --scale full, whose 70,000-document stage took 57 min in one
#: run and more than the hour the bench gave every child in the next (killed at 60 min)
STAGE_SECONDS_PER_DOC = 0.2


def sizes(ctx: Ctx) -> list[int]:
    # small: the 1 : 3 : 10 steps at 1/250 of its sizes (indexing runs at a few documents
    # per second with the knowledge selector on this machine; see ANALYSIS.md); medium: at 1/10
    # (about 6 GB of store and 10 minutes of indexing)
    return {"tiny": [20, 40, 80], "small": [40, 120, 400], "medium": [1000, 3000, 10000],
            "full": [10000, 30000, 100000]}[ctx.scale]


def n_questions(ctx: Ctx) -> int:
    return ctx.pick(8, 60, 200)


def build(ctx: Ctx, with_ask: bool = True) -> Built:
    """The store after every stage, built once a run: a section that needs it after the build
    failed fails too, with the build's error, rather than indexing everything again (at --scale
    full that was another 80 minutes)."""
    done = ctx.memo.get("docstore")
    if isinstance(done, Built):
        return done
    if isinstance(done, BaseException):
        raise BenchError(f"the documents' store failed to build earlier in this run: {done}")
    try:
        built = _build(ctx, with_ask)
    except Exception as e:
        ctx.memo["docstore"] = e
        raise
    ctx.memo["docstore"] = built
    return built


def _build(ctx: Ctx, with_ask: bool) -> Built:
    stages_n = sizes(ctx)
    work = ctx.dir("docs")
    corpus = work / "corpus.jsonl"
    info = make_documents(ctx.shared, corpus, n_docs=stages_n[-1], seed=2, prefix="g")
    questions = work / "questions.jsonl"
    make_questions(ctx.shared, questions, n_questions(ctx))
    lines = corpus.read_text(encoding="utf-8").splitlines()
    # warm-up, not timed: index a few documents into a throw-away copy of the lexicon store, so
    # that the disk caches keyed by its catalog (lexicon, knowledge base, language model) exist
    # and the first stage is timed like the others (ANALYSIS.md, "grow")
    warm = ctx.copy_store("lex", work / "warm")
    part = work / "warm-up.jsonl"
    part.write_text("\n".join(lines[:WARM_UP]) + "\n", encoding="utf-8")
    ctx.log(f"  warm-up: indexing {WARM_UP} documents into a throw-away copy")
    run_child([*KG, "--store", str(warm), "index", str(part), "--json"])
    shutil.rmtree(warm, ignore_errors=True)
    store = ctx.copy_store("lex", work / "store")
    base = dir_size(store)
    stages: list[Stage] = []
    prev = 0
    for n in stages_n:
        part = work / f"part-{n}.jsonl"
        part.write_text("\n".join(lines[prev:n]) + "\n", encoding="utf-8")
        ctx.log(f"  indexing documents {prev}–{n} of the corpus")
        r = run_child([*KG, "--store", str(store), "index", str(part), "--json"],
                      timeout=max(3600.0, (n - prev) * STAGE_SECONDS_PER_DOC))
        size = dir_size(store)
        st = Stage(n, n - prev, r, size)
        if with_ask:
            # the questions it records are forgotten after, with the decisions only they made,
            # so that they do not enter the next stage (a copy of the store for it would double
            # the disk the largest stage needs: ~30 GB at 100,000 documents)
            st.ask = run_child(worker("work_ask", str(store), str(questions), "10", "--forget"))
        stages.append(st)
        prev = n
    (work / "stages.json").write_text(json.dumps({"corpus": info, "stages": [
        {"docs": s.docs, "wall": s.index.wall, "store_bytes": s.store_bytes} for s in stages]}))
    return Built(corpus, questions, store, base, stages)
