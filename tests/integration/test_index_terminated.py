"""``kg-rag index`` stopped by SIGTERM (``kill``, a service manager, a job's time limit) stops as
Ctrl-C does: the write under way is undone, the store is closed, the exit status says so (143)
— the store holds whole documents only and the next command can open it and index."""

from __future__ import annotations

import gc
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.store import Values, stamp


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _whole_documents_only(store: Path, before: set[str]) -> None:
    kg = KnowledgeGraph.open(path=str(store))
    try:
        docs = [r["doc"] for r in kg.store.select("select-documents")]
        added = {d.value for d in docs} - before
        assert len(added) < 3000, "the run was not stopped half-way"
        # every document it wrote is whole: its text is there
        texts = {r["doc"].value for r in kg.store.select("select-document-texts",
                                                         values=Values.column("doc", docs))}
        assert texts == {d.value for d in docs}
        # and no document graph holds a part of one (its decisions written, its text not)
        engine = kg.store.oxigraph  # type: ignore[attr-defined]
        graphs = {g.value for g in engine.named_graphs() if stamp.is_document(g)}
        assert graphs == {d.value for d in docs}
    finally:
        kg.close()


def test_sigterm_during_index_leaves_whole_documents_and_an_open_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    kg = KnowledgeGraph.open(path=str(store))
    build_demo(kg)
    before = {r["doc"].value for r in kg.store.select("select-documents")}
    kg.close()
    del kg
    gc.collect()   # the engine's lock goes with its last reference
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i in range(3000):
            f.write(json.dumps({"id": f"t{i:05d}", "lang": "en",
                                "text": f"Report {i}: the bank of the river flooded, and the bank closed."}) + "\n")
    run = [sys.executable, "-m", "kg_rag", "--store", str(store)]
    size = _size(store)
    proc = subprocess.Popen(run + ["index", str(corpus)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while _size(store) < size + (256 << 10):   # it has opened the store and is writing
            assert proc.poll() is None, f"index ended before it was stopped: {proc.stderr.read() if proc.stderr else ''}"
            assert time.monotonic() - t0 < 180, "index wrote nothing within 180 s"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "kg-rag: terminated" in err and "Traceback" not in err

    _whole_documents_only(store, before)
    gc.collect()   # the engine's lock goes with its last reference
    # the store is closed and usable: the next run indexes, and the ranking's index is current
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "after", "lang": "en", "text": "The river bank after the stop."}) + "\n",
                    encoding="utf-8")
    done = subprocess.run(run + ["index", str(more)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    status = subprocess.run(run + ["postings"], capture_output=True, text=True, timeout=300)
    assert status.returncode == 0 and "posting index current" in status.stdout, status.stdout + status.stderr
