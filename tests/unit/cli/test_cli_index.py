"""``kg-rag index FOLDER``: ids relative to the folder, bad files skipped and named (``--strict``:
an error, nothing indexed), no absolute path of the indexing machine in the store."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.resources import resource_path

DEMO = resource_path("demo")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    assert main(["--store", str(path), "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")]) == 0
    return path


def corpus(root: Path) -> Path:
    for sub, text in (("a", "The fruits weighed down the branches of the fig tree."),
                      ("b", "The river bank was muddy after the rain.")):
        (root / sub).mkdir(parents=True)
        (root / sub / "notes.txt").write_text(text, encoding="utf-8")
    (root / "empty.md").write_text("\n", encoding="utf-8")
    (root / "scan.pdf").write_bytes(b"%PDF-1.7")
    return root


def documents(store: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    capsys.readouterr()
    assert main(["--store", str(store), "documents", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return out if isinstance(out, list) else out["documents"]


def test_a_folder_with_bad_files_is_indexed_and_the_bad_ones_named(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus(tmp_path / "corpus")
    capsys.readouterr()
    assert main(["--store", str(store), "index", str(folder)]) == 0
    out, err = capsys.readouterr()
    assert "indexed 2 documents" in out
    assert "skipped 2 files" in err and "scan.pdf" in err and "empty.md" in err
    ids = {d["id"] for d in documents(store, capsys)}
    assert ids == {"a/notes", "b/notes"}            # two notes.txt: two documents
    capsys.readouterr()
    assert main(["--store", str(store), "sparql", "--format", "tsv",
                 "SELECT ?s WHERE { GRAPH ?g { ?d <http://purl.org/dc/terms/source> ?s } }"]) == 0
    sources = capsys.readouterr().out
    assert "a/notes.txt" in sources and str(tmp_path) not in sources


def test_strict_makes_a_bad_file_an_error_and_indexes_nothing(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = corpus(tmp_path / "corpus")
    capsys.readouterr()
    assert main(["--store", str(store), "index", "--strict", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "empty" in err and len(err.strip().splitlines()) == 1
    assert documents(store, capsys) == []


def test_a_re_index_names_the_documents_gone_from_the_folder_and_prune_deletes_them(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    folder = corpus(tmp_path / "corpus")
    other = tmp_path / "other"
    other.mkdir()
    (other / "fig.txt").write_text("The fig tree has broad leaves.", encoding="utf-8")
    assert main(["--store", str(store), "index", str(folder)]) == 0
    assert main(["--store", str(store), "index", str(other)]) == 0
    (folder / "b" / "notes.txt").unlink()
    caplog.clear()
    capsys.readouterr()
    assert main(["--store", str(store), "index", "--json", str(folder)]) == 0
    rep = json.loads(capsys.readouterr().out)
    # b/notes is gone from this folder; fig (another folder's) is not this folder's
    assert rep["gone"] == ["b/notes"] and rep["pruned"] is False
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("1 document(s) indexed earlier" in w and "b/notes" in w and "--prune" in w
               for w in warned)
    assert {d["id"] for d in documents(store, capsys)} == {"a/notes", "b/notes", "fig"}
    # re-indexing the other folder warns about nothing
    caplog.clear()
    assert main(["--store", str(store), "index", "--json", str(other)]) == 0
    assert json.loads(capsys.readouterr().out)["gone"] == []
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    # --prune deletes what is gone
    assert main(["--store", str(store), "index", "--prune", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "deleted 1 document indexed earlier from these folders or files that is no longer there: b/notes" in out
    assert {d["id"] for d in documents(store, capsys)} == {"a/notes", "fig"}
    # the key recorded is opaque: no path of the indexing machine
    assert main(["--store", str(store), "sparql", "--format", "tsv",
                 "SELECT ?r WHERE { GRAPH ?g { ?d <https://w3id.org/kg-rag/ns#indexRoot> ?r } }"]) == 0
    keys = capsys.readouterr().out.split()[1:]
    assert keys and all(len(k.strip('"')) == 16 and str(tmp_path) not in k for k in keys)


def test_records_left_out_of_a_json_lines_file_are_gone(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "corpus.jsonl"
    recs = [{"id": f"r{i}", "text": "The river bank was muddy after the rain.", "lang": "en"}
            for i in range(3)]
    f.write_text("\n".join(json.dumps(r) for r in recs), encoding="utf-8")
    assert main(["--store", str(store), "index", str(f)]) == 0
    f.write_text(json.dumps(recs[0]), encoding="utf-8")
    capsys.readouterr()
    assert main(["--store", str(store), "index", "--json", str(f)]) == 0
    assert json.loads(capsys.readouterr().out)["gone"] == ["r1", "r2"]
    # nothing to compare standard input with: a usage error
    assert main(["--store", str(store), "index", "--prune", "-"]) == 2
    assert "--prune is for folders and files" in capsys.readouterr().err


def _long_document() -> str:
    return "\n\n".join(["The fruits weighed down the branches of the fig tree.",
                        "The river bank was muddy after the rain."] * 40)


def test_progress_within_one_document_counts_its_characters_then_its_decisions(store: Path) -> None:
    from kg_rag.api import KnowledgeGraph
    from kg_rag.documents import SourceDocument
    from kg_rag.store import open_store

    calls: list[tuple[str, str, int, int]] = []
    text = _long_document()
    with KnowledgeGraph(open_store(path=str(store))) as kg:
        rep = kg.index_documents([SourceDocument("long", text, "en")],
                                 detail=lambda *a: calls.append(a))
    annotate = [c for c in calls if c[1] == "annotate"]
    assert len(annotate) == 80 and all(c[0] == "long" and c[3] == len(text) for c in annotate)
    done = [c[2] for c in annotate]
    assert done == sorted(done) and done[-1] == len(text) and done[0] < len(text)
    decide = [c[2:] for c in calls if c[1] == "decide"]
    assert decide == [(0, rep.ambiguous), (rep.ambiguous, rep.ambiguous)] and rep.ambiguous > 0
    assert calls.index(("long", "decide", 0, rep.ambiguous)) > calls.index(annotate[-1])


def test_a_long_document_gets_a_bar_of_its_own(capsys: pytest.CaptureFixture[str]) -> None:
    from kg_rag.cli.documents import WithinDocument

    within = WithinDocument(enabled=True, long=1000)
    within("short", "annotate", 10, 500)      # under the threshold: no bar
    assert within.bar is None
    within("long", "annotate", 600, 2000)
    within("long", "annotate", 2000, 2000)
    assert within.bar is not None and within.bar.n == 2000
    within("long", "decide", 0, 7)
    assert "long: deciding 7 ambiguous mentions" in str(within.bar)
    within("long", "decide", 7, 7)
    assert within.bar is None
    err = capsys.readouterr().err
    assert "long: annotating" in err and "short" not in err
    quiet = WithinDocument(enabled=False, long=1)
    quiet("long", "annotate", 1, 2)
    assert quiet.bar is None


def test_the_bar_of_a_document_in_sections() -> None:
    """Sections: annotate, decide, annotate again — one bar, back to annotating, closed once
    all mentions are decided."""
    from kg_rag.cli.documents import WithinDocument

    within = WithinDocument(enabled=True, long=1000)
    within("long", "annotate", 900, 2000)
    within("long", "decide", 0, 5)
    bar = within.bar
    assert bar is not None and "deciding 5" in str(bar)
    within("long", "annotate", 2000, 2000)
    assert within.bar is bar and "long: annotating" in str(bar) and bar.n == 2000
    within("long", "decide", 5, 9)
    assert within.bar is bar and "deciding 9" in str(bar)
    within("long", "decide", 9, 9)
    assert within.bar is None


def test_postings_says_whether_the_index_is_current_and_rebuilds_it(
        store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kg_rag.api import KnowledgeGraph

    capsys.readouterr()
    assert main(["--store", str(store), "postings"]) == 0
    assert "not current" in capsys.readouterr().out          # nothing indexed yet
    assert main(["--store", str(store), "index", str(corpus(tmp_path / "corpus"))]) == 0
    capsys.readouterr()
    assert main(["--store", str(store), "postings", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["current"] and state["documents"] == 2 and state["postings"] > 0
    kg = KnowledgeGraph.open(path=str(store))                 # an update it cannot follow
    kg.update("INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/x> "
              "{ <https://w3id.org/kg-rag/id/doc/x> <http://example.org/p> 1 } }")
    kg.close()
    del kg
    gc.collect()   # the engine lets go of its lock when the store object goes
    assert main(["--store", str(store), "postings"]) == 0
    out = capsys.readouterr().out
    assert "not current" in out and "--rebuild" in out
    assert main(["--store", str(store), "postings", "--rebuild"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("posting index current: 2 documents")
