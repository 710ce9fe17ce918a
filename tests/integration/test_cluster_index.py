"""``kg-rag index --executor dask://…``: a local two-worker Dask cluster on loopback indexes the
demo corpus into one ``oxigraph serve``; the store then holds what a single process writes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.pipeline.shapes import validate
from kg_rag.store import RemoteStore
from tests.support.oxigraph_server import oxigraph_binary, oxigraph_server
from tests.support.paths import ROOT

distributed = pytest.importorskip("distributed", reason="the 'cluster' extra (distributed) is not installed")

DEMO = ROOT / "demo"
QUESTIONS = ["הפירות העמיסו על הבדים", "Der Hahn tropft", "bank account"]

pytestmark = pytest.mark.skipif(oxigraph_binary() is None,
                                reason="the oxigraph server CLI is not installed")


def _kg_rag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg_rag", *args], capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    try:
        yield "dask://" + cluster.scheduler_address.removeprefix("tcp://")
    finally:
        cluster.close()


def _state(endpoint: str) -> tuple[list[str], list[list[tuple[str, float]]], int]:
    """Documents, rankings and the number of quads of the kg-rag graphs (decisions included)."""
    kg = KnowledgeGraph(RemoteStore(endpoint))
    ids = sorted(d["id"] for d in kg.documents())
    answers = [[(r.doc_id, round(r.score, 9)) for r in
                kg.ask(q, record_question=False).results] for q in QUESTIONS]
    conforms, report = validate(kg.store)
    assert conforms, report
    from kg_rag.pipeline.shapes import store_data_graph

    return ids, answers, len(store_data_graph(kg.store))


def test_index_on_a_dask_cluster_equals_one_process(scheduler: str, tmp_path: Path) -> None:
    corpus = str(DEMO / "documents" / "corpus.jsonl")
    with oxigraph_server(tmp_path / "cluster") as on_cluster, \
            oxigraph_server(tmp_path / "single") as single:
        for url in (on_cluster, single):
            assert _kg_rag("--endpoint", url, "load", str(DEMO / "thesaurus.ttl"),
                           str(DEMO / "dictionary.ttl")).returncode == 0
        r = _kg_rag("--endpoint", on_cluster, "index", "--executor", scheduler, "--json", corpus)
        assert r.returncode == 0, r.stderr
        assert '"documents": 41' in r.stdout
        # a second run over the cluster: the documents are replaced, the decisions reused
        assert _kg_rag("--endpoint", on_cluster, "index", "--executor", scheduler,
                       corpus).returncode == 0
        for _ in range(2):   # the same two runs in one process
            assert _kg_rag("--endpoint", single, "index", corpus).returncode == 0
        assert _state(on_cluster) == _state(single)


def test_the_executor_needs_a_remote_store_and_a_dask_address(tmp_path: Path) -> None:
    corpus = str(DEMO / "documents" / "corpus.jsonl")
    r = _kg_rag("--store", str(tmp_path / "s"), "index", "--executor", "dask://127.0.0.1:1", corpus)
    assert r.returncode == 2 and "needs a remote store" in r.stderr
    r = _kg_rag("--store", str(tmp_path / "s"), "index", "--executor", "spark://x", corpus)
    assert r.returncode == 2 and "dask://HOST:PORT" in r.stderr
