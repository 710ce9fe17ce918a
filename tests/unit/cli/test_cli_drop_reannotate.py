"""drop-source of a thesaurus that documents use: the documents are named (warning, --json), and
--reannotate annotates them again from their stored text with what is still loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.store import open_store
from tests.support.paths import ROOT

DEMO = ROOT / "demo"


def run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _indexed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, set[str]]:
    store = tmp_path / "store"
    assert run(capsys, store, "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl"))[0] == 0
    assert run(capsys, store, "index", str(DEMO / "documents" / "corpus.jsonl"))[0] == 0
    _, out, _ = run(capsys, store, "sources", "--json")
    [thesaurus] = [s["graph"] for s in json.loads(out) if s["title"] == "thesaurus.ttl"]
    with KnowledgeGraph(open_store(str(store))) as kg:
        subjects = {q.subject.value for q in kg.store.oxigraph.quads_for_pattern(
            None, None, None, pyoxigraph.NamedNode(thesaurus))}
    return store, thesaurus, subjects


def _candidates(store: Path) -> dict[str, set[str]]:
    with KnowledgeGraph(open_store(str(store))) as kg:
        return {d["id"]: {c for a in kg.document(d["id"])["annotations"] for c in a["candidates"]}
                for d in kg.documents()}


def test_drop_names_the_documents_that_used_its_concepts(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    store, thesaurus, subjects = _indexed(tmp_path, capsys)
    users = sorted(i for i, cands in _candidates(store).items() if cands & subjects)
    assert len(users) > 1
    code, out, _ = run(capsys, store, "drop-source", "--json", thesaurus)
    assert code == 0
    err = caplog.text
    rep = json.loads(out)
    assert rep["dropped"] == thesaurus and sorted(rep["documents"]) == users
    assert rep["reannotated"] is False and all(n > 0 for n in rep["documents"].values())
    assert f"{len(users)} document(s) have" in err and "--reannotate" in err
    # nothing was re-annotated: they still name the dropped concepts
    assert any(c & subjects for c in _candidates(store).values())


def test_drop_with_reannotate_annotates_with_what_is_still_loaded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    store, thesaurus, subjects = _indexed(tmp_path, capsys)
    before = _candidates(store)
    code, out, _ = run(capsys, store, "drop-source", "--reannotate", thesaurus)
    assert code == 0 and "annotated 41 documents again" in out
    assert "point at nothing" not in caplog.text
    after = _candidates(store)
    assert set(after) == set(before)  # the same documents, none lost
    # "Person" was matched by the thesaurus's label only: annotated again, it is gone; "Bank"
    # keeps the readings the dictionary's German senses give it
    person = "https://w3id.org/kg-rag/demo/concept/person"
    assert person in before["de-parkbank"] and person not in after["de-parkbank"]
    assert after["de-parkbank"] == before["de-parkbank"] - {person}
    he = [i for i in after if i.startswith("he-")]
    assert he and any(after[i] for i in he)


def test_drop_of_an_unused_source_says_nothing_more(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    assert run(capsys, store, "load", str(DEMO / "thesaurus.ttl"))[0] == 0
    _, out, _ = run(capsys, store, "sources", "--json")
    [g] = [s["graph"] for s in json.loads(out)]
    code, out, err = run(capsys, store, "drop-source", "--json", g)
    assert code == 0 and json.loads(out)["documents"] == {} and err == ""
