"""One endpoint, several kg-rag processes: what one loads, the others see (their derived caches
re-check the catalog), and two indexers writing disjoint documents at once lose and duplicate
nothing (a real ``oxigraph serve`` on loopback)."""

from __future__ import annotations

import json
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

DEMO = ROOT / "demo"
QUESTION = "הפירות העמיסו על הבדים"

pytestmark = pytest.mark.skipif(oxigraph_binary() is None,
                                reason="the oxigraph server CLI is not installed")


@pytest.fixture
def endpoint(tmp_path: Path) -> Iterator[str]:
    with oxigraph_server(tmp_path / "ox") as url:
        yield url


def test_a_vocabulary_loaded_by_another_process_is_seen(endpoint: str) -> None:
    first = KnowledgeGraph(RemoteStore(endpoint))
    assert first.annotate("Bank", lang="de") == []          # nothing loaded yet: no mention
    other = KnowledgeGraph(RemoteStore(endpoint))           # another process, as far as caches go
    other.load([DEMO / "thesaurus.ttl"])
    assert first.annotate("Bank", lang="de")                 # its empty lexicon was not kept
    other.drop_source(other.sources()[0]["graph"])
    assert first.annotate("Bank", lang="de") == []


def _kg_rag(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kg_rag", *args], capture_output=True, text=True,
                          timeout=600, check=False)


def test_two_indexers_at_once_on_one_endpoint(endpoint: str, tmp_path: Path) -> None:
    assert _kg_rag("--endpoint", endpoint, "load", str(DEMO / "thesaurus.ttl"),
                   str(DEMO / "dictionary.ttl")).returncode == 0
    records = [json.loads(line) for line in
               (DEMO / "documents" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    halves = [records[0::2], records[1::2]]
    files = []
    for i, half in enumerate(halves):
        f = tmp_path / f"part{i}.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in half), encoding="utf-8")
        files.append(f)
    procs = [subprocess.Popen([sys.executable, "-m", "kg_rag", "--endpoint", endpoint, "index",
                               str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in files]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    kg = KnowledgeGraph(RemoteStore(endpoint))
    ids = sorted(d["id"] for d in kg.documents())
    assert ids == sorted(r["_id"] if "_id" in r else r["id"] for r in records)   # none lost, none twice
    conforms, report = validate(kg.store)
    assert conforms, report
    # the same answer as one process indexing everything into another endpoint
    with oxigraph_server(tmp_path / "one") as single:
        assert _kg_rag("--endpoint", single, "load", str(DEMO / "thesaurus.ttl"),
                       str(DEMO / "dictionary.ttl")).returncode == 0
        assert _kg_rag("--endpoint", single, "index",
                       str(DEMO / "documents" / "corpus.jsonl")).returncode == 0
        one = KnowledgeGraph(RemoteStore(single))
        two = kg.ask(QUESTION, record_question=False)
        ref = one.ask(QUESTION, record_question=False)
        assert [(r.doc_id, round(r.score, 9)) for r in two.results] == \
               [(r.doc_id, round(r.score, 9)) for r in ref.results]


def test_serve_with_two_workers_over_one_endpoint(endpoint: str) -> None:
    """``serve --workers 2 --endpoint``: two processes answer, with the same answers, and a
    vocabulary loaded behind their back by a third process is seen by both."""
    import concurrent.futures
    import os

    import httpx

    from tests.integration.test_service_cli import _start, _stop

    assert _kg_rag("--endpoint", endpoint, "load", str(DEMO / "thesaurus.ttl"),
                   str(DEMO / "dictionary.ttl")).returncode == 0
    assert _kg_rag("--endpoint", endpoint, "index",
                   str(DEMO / "documents" / "corpus.jsonl")).returncode == 0
    proc, url, _ = _start(["--endpoint", endpoint], serve_args=("--workers", "2"))
    try:
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
                    .read_text().split()]
        workers = [c for c in children
                   if "kg_rag" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")
                   or "multiprocessing" in Path(f"/proc/{c}/cmdline").read_bytes().decode(errors="replace")]
        assert len(workers) >= 2, children

        def ask(_: int) -> list[str]:
            r = httpx.post(url + "/ask", json={"question": QUESTION, "k": 5}, timeout=60)
            assert r.status_code == 200, r.text
            return [d["id"] for d in r.json()["results"]]

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(ask, range(24)))
        assert answers[0] and all(a == answers[0] for a in answers)
        # a German word no loaded vocabulary knows, then a vocabulary that knows it
        extra = Path(os.environ.get("TMPDIR", "/tmp")) / f"kgr-extra-{proc.pid}.ttl"
        extra.write_text('@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n'
                         '<http://example.org/c/zwiebel> a skos:Concept ; '
                         'skos:prefLabel "Zwiebel"@de .\n', encoding="utf-8")
        try:
            def annotate(_: int) -> int:
                r = httpx.post(url + "/annotate", json={"text": "Zwiebel", "lang": "de"}, timeout=60)
                assert r.status_code == 200, r.text
                return len(r.json()["mentions"])
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                assert set(pool.map(annotate, range(8))) == {0}
            assert _kg_rag("--endpoint", endpoint, "load", str(extra)).returncode == 0
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                assert set(pool.map(annotate, range(8))) == {1}
        finally:
            extra.unlink()
    finally:
        _stop(proc)


def test_workers_need_a_remote_store(tmp_path: Path) -> None:
    r = _kg_rag("--store", str(tmp_path / "s"), "serve", "--workers", "2")
    assert r.returncode == 2 and "needs a remote store" in r.stderr
