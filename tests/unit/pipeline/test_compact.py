"""``kg-rag compact``: the embedded store's files compacted, the data, the posting index and the
answers unchanged; nothing to do in memory; a clear refusal for an endpoint."""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main


def _answer(kg: KnowledgeGraph) -> list[tuple[str, float]]:
    a = kg.ask("הפירות העמיסו על הבדים", lang="he", focus=(17, 22), record_question=False)
    return [(r.doc_iri, round(r.score, 9)) for r in a.results]


def _state(path: Path) -> tuple[set[object], bool, list[tuple[str, float]]]:
    """Every quad, whether the posting index is current, and an answer (recording nothing);
    the store closed after."""
    kg = KnowledgeGraph.open(path=str(path))
    try:
        return set(kg.store.oxigraph), kg.postings()["current"], _answer(kg)
    finally:
        kg.close()
        del kg
        gc.collect()   # the engine's handle (and its lock) goes with the last reference


def test_compact_keeps_every_quad_the_posting_index_and_the_answers(
        demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = shutil.copytree(demo, tmp_path / "s")
    with KnowledgeGraph.open(path=str(path)) as kg:
        kg.postings(rebuild=True)
    del kg
    gc.collect()
    before = _state(path)
    assert before[1]
    assert main(["--store", str(path), "compact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compacted"] is True and out["bytes_before"] > 0 and out["bytes_after"] > 0
    # the same quads and answer, and the posting index still current (compaction moves no
    # documents stamp)
    assert _state(path) == before
    assert main(["--store", str(path), "compact"]) == 0
    assert capsys.readouterr().out.startswith("compacted: ")


def test_compact_in_memory_has_nothing_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", ":memory:", "compact"]) == 0
    assert capsys.readouterr().out.strip() == "nothing to compact (an in-memory store)"


def test_compact_an_endpoint_is_refused_in_one_line(
        oxigraph_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--endpoint", oxigraph_url, "compact"]) != 0
    err = capsys.readouterr().err.strip()
    assert "compacting is for the embedded store" in err and "\n" not in err
