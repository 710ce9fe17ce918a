"""Peer workers for ``retrieve``.

    python -m bench.work_peers bm25 CORPUS.jsonl QUESTIONS.jsonl K
        BM25 (bm25s) over the same documents: index once, then one query per question.
    python -m bench.work_peers rdflib DOCS.nq CONCEPTS.json [BUDGET_S]
        The same retrieval query (``sparql/select-document-postings.rq`` with the same VALUES
        as ours) run by rdflib's in-memory SPARQL engine over the documents' graphs.
    python -m bench.work_peers oxquery DOCS.nq CONCEPTS.json STORE_DIR
        The same query through our store API on a store holding exactly the same quads.
    python -m bench.work_peers dumpdocs STORE OUT.nq MAX_DOCS
        The document graphs of our store as N-Quads (the rdflib engine's data).
    python -m bench.work_peers embedq STORE CONCEPTS.json
        The retrieval query through our embedded store, opened read-only, on the whole store.
    python -m bench.work_peers serveq STORE CONCEPTS.json OXIGRAPH
        The same query through our remote store against ``oxigraph serve-read-only`` of the same
        store folder (started here on a free loopback port, stopped at the end).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def bm25(corpus: str, qfile: str, k: str) -> dict[str, object]:
    import bm25s

    docs = [json.loads(x) for x in Path(corpus).read_text(encoding="utf-8").splitlines() if x]
    qs = [json.loads(x) for x in Path(qfile).read_text(encoding="utf-8").splitlines() if x]
    t0 = time.perf_counter()
    tokens = bm25s.tokenize([d["text"] for d in docs], stopwords=None, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    t_index = time.perf_counter() - t0
    n = len(docs)
    lat: list[float] = []
    for q in qs:
        a = time.perf_counter()
        qt = bm25s.tokenize([q["text"]], stopwords=None, show_progress=False)
        if qt.vocab:
            retriever.retrieve(qt, k=min(int(k), n), show_progress=False, n_threads=1)
        lat.append(time.perf_counter() - a)
    return {"index_s": t_index, "latencies": lat[3:], "docs": n}


def dumpdocs(store: str, out: str, max_docs: str) -> dict[str, object]:
    import pyoxigraph

    from kg_rag.pipeline import record

    prefix = record.doc_iri("").value
    st = pyoxigraph.Store.read_only(store)
    graphs = sorted(g.value for g in st.named_graphs()
                    if isinstance(g, pyoxigraph.NamedNode) and g.value.startswith(prefix))
    graphs = graphs[: int(max_docs)]
    n = 0
    with open(out, "wb") as f:
        for g in graphs:
            quads = list(st.quads_for_pattern(None, None, None, pyoxigraph.NamedNode(g)))
            n += len(quads)
            pyoxigraph.serialize(quads, f, pyoxigraph.RdfFormat.N_QUADS)
    return {"graphs": len(graphs), "quads": n}


def rdflib_query(nq: str, concepts_file: str, budget_s: str = "600") -> dict[str, object]:
    import rdflib
    from pyoxigraph import NamedNode

    from kg_rag.store import Values, queries
    from kg_rag.store.render import values_block

    t0 = time.perf_counter()
    ds = rdflib.Dataset()
    ds.parse(nq, format="nquads")
    t_load = time.perf_counter() - t0
    q = queries.get("select-document-postings")
    work = json.loads(Path(concepts_file).read_text(encoding="utf-8"))
    lat: list[float] = []
    rows: list[int] = []
    import signal

    class _Budget(Exception):
        pass

    def _alarm(*_: object) -> None:
        raise _Budget

    signal.signal(signal.SIGALRM, _alarm)
    t_end = time.perf_counter() + float(budget_s)
    cut_off: float | None = None   # a query stopped at the budget: its latency is at least this
    for item in work:
        left = t_end - time.perf_counter()
        if left <= 0:  # the engine is slow: stop, the report says how many ran
            break
        text = q.with_values(values_block(Values.column("concept", [NamedNode(c) for c in item["concepts"]])))
        a = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, left)
        try:
            res = list(ds.query(text))
        except _Budget:
            cut_off = time.perf_counter() - a
            break
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        lat.append(time.perf_counter() - a)
        rows.append(len(res))
    return {"load_s": t_load, "latencies": lat, "rows": rows, "cut_off": cut_off}


def oxquery(nq: str, concepts_file: str, store_dir: str) -> dict[str, object]:
    """Ours on exactly the rdflib data: the same quads in an on-disk embedded store."""
    import pyoxigraph
    from pyoxigraph import NamedNode

    from kg_rag.store import EmbeddedStore, Values

    t0 = time.perf_counter()
    st = EmbeddedStore(store_dir)
    st.oxigraph.bulk_load(path=nq, format=pyoxigraph.RdfFormat.N_QUADS)
    st.oxigraph.flush()
    t_load = time.perf_counter() - t0
    work = json.loads(Path(concepts_file).read_text(encoding="utf-8"))
    lat: list[float] = []
    rows: list[int] = []
    for item in work:
        vals = Values.column("concept", [NamedNode(c) for c in item["concepts"]])
        a = time.perf_counter()
        res = st.select("select-document-postings", values=vals)
        lat.append(time.perf_counter() - a)
        rows.append(len(res))
    st.close()
    return {"load_s": t_load, "latencies": lat, "rows": rows}


def _timed(st: object, concepts_file: str) -> tuple[list[float], list[int]]:
    """Latency and row count of the retrieval query for each item, after one unmeasured pass."""
    from pyoxigraph import NamedNode

    from kg_rag.store import Values

    items = json.loads(Path(concepts_file).read_text(encoding="utf-8"))
    lat: list[float] = []
    rows: list[int] = []
    for warm in (True, False):   # once unmeasured: both sides warm (the store's pages, the server)
        for item in items:
            vals = Values.column("concept", [NamedNode(c) for c in item["concepts"]])
            a = time.perf_counter()
            res = st.select("select-document-postings", values=vals)  # type: ignore[attr-defined]
            if not warm:
                lat.append(time.perf_counter() - a)
                rows.append(len(res))
    return lat, rows


def embedq(store: str, concepts_file: str) -> dict[str, object]:
    """``select-document-postings`` with each question's VALUES, in process, on the whole store."""
    from kg_rag.store import EmbeddedStore

    st = EmbeddedStore(store, read_only=True)
    try:
        lat, rows = _timed(st, concepts_file)
    finally:
        st.close()
    return {"latencies": lat, "rows": rows}


def serveq(store: str, concepts_file: str, oxigraph: str) -> dict[str, object]:
    """The same query, the same VALUES, through our remote store (SPARQL protocol, JSON results
    parsed into the same rows) against ``oxigraph serve-read-only`` of the same folder."""
    import subprocess

    from bench.sec_service import _free_port, _wait_url
    from kg_rag.store import RemoteStore

    base = f"http://127.0.0.1:{_free_port()}"
    bind = base.removeprefix("http://")
    proc = subprocess.Popen([oxigraph, "serve-read-only", "--location", store, "--bind", bind],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_url(f"{base}/query?query=ASK%7B%7D", proc)
        st = RemoteStore(f"{base}/query", read_only=True, timeout=600)
        lat, rows = _timed(st, concepts_file)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"latencies": lat, "rows": rows}


def main(argv: list[str]) -> int:
    cmd, *args = argv
    fn = {"bm25": bm25, "rdflib": rdflib_query, "dumpdocs": dumpdocs, "oxquery": oxquery,
          "embedq": embedq, "serveq": serveq}.get(cmd)
    if fn is None:
        raise SystemExit(f"unknown command {cmd}")
    print(json.dumps(fn(*args)))  # type: ignore[operator]
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
