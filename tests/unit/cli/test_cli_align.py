"""CLI: align, alignments (list, accept, reject) on the demo with its hand links taken out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.align.evaluate import strip_links
from kg_rag.cli import main
from kg_rag.resources import resource_path

DEMO = resource_path("demo")


def run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_align_review_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    strip_links(DEMO / "dictionary.ttl", tmp_path / "dictionary.nt")
    assert run(capsys, store, "load", str(DEMO / "thesaurus.ttl"), str(tmp_path / "dictionary.nt"))[0] == 0

    code, out, err = run(capsys, store, "align", "dictionary", "dictionary")
    assert code == 2 and out == "" and err.count("\n") == 1 and "same source" in err
    code, _, err = run(capsys, store, "align", "thesaurus", "nosuch")
    assert code == 2 and "no loaded source 'nosuch'" in err
    code, out, _ = run(capsys, store, "alignments", "--json")
    assert code == 0 and json.loads(out) == []                      # nothing was written

    code, out, _ = run(capsys, store, "align", "dictionary", "thesaurus")
    assert code == 0 and "51 senses, 50 with candidate concepts, 50 proposals" in out
    code, out, _ = run(capsys, store, "alignments", "--status", "proposed", "--json")
    links = json.loads(out)
    assert len(links) == 50 and links[0]["score"] >= links[-1]["score"]
    code, out, _ = run(capsys, store, "alignments", "accept", "--above", "0.5")
    assert code == 0 and out.startswith("47 links accepted")
    low = links[-1]["id"]
    code, out, _ = run(capsys, store, "alignments", "reject", low[:8])
    assert code == 0 and out.startswith("1 link rejected") and low in out
    code, out, _ = run(capsys, store, "alignments", "--status", "accepted")
    assert code == 0 and len(out.splitlines()) == 47
    with pytest.raises(SystemExit) as stop:                         # argparse: ID… or --above
        run(capsys, store, "alignments", "accept")
    assert stop.value.code == 2 and "--above" in capsys.readouterr().err
    code, _, err = run(capsys, store, "alignments", "reject", "ffffffffff")
    assert code == 7 and "no alignment link" in err
