"""``kg-rag index --workers N``: forked workers read, annotate and decide, the parent writes —
and the store ends up with exactly the graphs the serial run writes (timestamps aside), across
several generations, with a document given twice and passages repeated between documents (the
serial run reuses their decisions; so must the parallel one), on the embedded store and through
the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from pyoxigraph import Literal, Quad

from kg_rag.api import KnowledgeGraph
from kg_rag.documents import SourceDocument, read_documents
from kg_rag.errors import InputError
from kg_rag.namespaces import XSD
from kg_rag.pipeline import parallel
from kg_rag.pipeline.shapes import validate
from kg_rag.store import EmbeddedStore, Store, stamp
from tests.support.paths import ROOT

DEMO = ROOT / "demo"


def _graphs(store: Store) -> set[str]:
    out = set()
    for r in store.select("select-subjects-by-literal"):
        if r["g"] == stamp.GRAPH:   # a random token per store
            continue
        o = r["o"]
        if isinstance(o, Literal) and o.datatype == XSD.dateTime:
            o = Literal("T", datatype=XSD.dateTime)
        out.add(str(Quad(r["s"], r["p"], o, r["g"])))
    return out


def _docs() -> list[SourceDocument]:
    docs = read_documents([DEMO / "documents"], 10_000_000)
    assert len(docs) >= 30
    first = docs[0]
    # the same document id again, with other text (the later one stands), and a document that
    # repeats another's passage word for word (its decision is reused, not made twice)
    again = replace(docs[1], text=docs[1].text + "\n\n" + docs[5].text)
    copy = SourceDocument(id="copy-of-first", text=first.text, lang=first.lang, title="copy")
    return docs[:2] + [copy, again] + docs[2:]


def _kg(path: Path | None = None) -> KnowledgeGraph:
    kg = KnowledgeGraph(EmbeddedStore(path or ":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


@pytest.fixture(scope="module")
def serial() -> tuple[set[str], object]:
    kg = _kg()
    rep = kg.index_documents(_docs())
    return _graphs(kg.store), rep


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_workers_write_what_the_serial_run_writes(serial: tuple[set[str], object], where: str,
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """In memory: generations of 2 × 4 documents; on disk: workers reading a snapshot for the
    whole run while this process writes (the snapshot folder is gone afterwards)."""
    monkeypatch.setattr(parallel, "PER_WORKER", 4)
    redone: list[str] = []
    build = parallel.build_document

    def in_parent(store, doc, *args):  # type: ignore[no-untyped-def]
        redone.append(doc.id)
        return build(store, doc, *args)

    monkeypatch.setattr(parallel, "build_document", in_parent)
    kg = _kg(tmp_path / "store" if where == "disk" else None)
    rep = kg.index_documents(_docs(), workers=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == (["store"] if where == "disk" else [])
    # the copy, the document given again, and the document whose text the latter now repeats
    # were decided again in this process, after the documents they depend on were written (the
    # workers' calls of this function are in their own processes, not seen here)
    docs = read_documents([DEMO / "documents"], 10_000_000)
    assert redone == ["copy-of-first", docs[1].id, docs[5].id]
    graphs, want = serial
    got = _graphs(kg.store)
    assert got == graphs, (sorted(got - graphs)[:3], sorted(graphs - got)[:3])
    assert rep.documents == want.documents and rep.mentions == want.mentions  # type: ignore[attr-defined]
    assert rep.reused == want.reused and rep.reused > 0  # type: ignore[attr-defined]
    conforms, report = validate(kg.store)
    assert conforms, report
    kg.close()


def test_more_workers_than_documents_and_bad_counts() -> None:
    kg = _kg()
    docs = _docs()[:3]
    assert kg.index_documents(docs, workers=8).documents == 3
    with pytest.raises(InputError, match="workers must be 1 or more"):
        kg.index_documents(docs, workers=0)


def test_a_bad_document_writes_nothing(tmp_path: Path) -> None:
    kg = _kg(tmp_path / "store")
    before = _graphs(kg.store)
    docs = _docs()[:5] + [SourceDocument(id="empty", text="   ")]
    with pytest.raises(InputError, match="is empty"):
        kg.index_documents(docs, workers=2)
    assert _graphs(kg.store) == before
    kg.close()


def test_the_cli_indexes_a_folder_with_workers(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run = [sys.executable, "-m", "kg_rag", "--store", str(store)]
    subprocess.run(run + ["load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")],
                   check=True, capture_output=True)
    out = subprocess.run(run + ["index", str(DEMO / "documents"), "--workers", "2", "--json"],
                         check=True, capture_output=True, text=True)
    rep = json.loads(out.stdout)
    assert rep["documents"] >= 30 and rep["decided"] > 0
    bad = subprocess.run(run + ["index", str(DEMO / "documents"), "--workers", "0"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "workers must be 1 or more" in bad.stderr


def test_what_the_workers_find_to_keep_is_kept_by_the_parent(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The vocabulary facts a worker asks the store for (origins, labels, readings, sense
    vectors) are handed back with its answer and kept by the parent: a later run starts from
    them, as after a serial run (a forked copy of the table never writes itself)."""
    from kg_rag.derived import Derived
    from kg_rag.pipeline import evidence_index
    from kg_rag.pipeline.kept_facts import KeptFacts, kept_tables

    monkeypatch.setattr(evidence_index, "SMALL_KEYS", 0)   # the demo is small: keep its facts
    kg = _kg(tmp_path / "store")
    Derived.of(kg.store, cache_dir=tmp_path / "cache")
    handed: list[tuple[KeptFacts, str, str]] = []
    keep = KeptFacts.keep_pending

    def spy(self: KeptFacts, pending: dict[str, dict[str, object]]) -> None:
        handed.extend((self, kind, key) for kind, found in pending.items() for key in found)
        keep(self, pending)

    monkeypatch.setattr(KeptFacts, "keep_pending", spy)
    kg.index_documents(_docs()[:12], workers=2)
    assert {kind for _, kind, _ in handed} >= {"origins"}, handed
    assert {t.path for t, _, _ in handed} <= {t.path for t in kept_tables(kg.store).values()}
    for table, kind, key in handed:   # every fact a worker handed back is in its table
        assert key in table.get_many(kind, [key])  # type: ignore[arg-type]
    kg.close()
