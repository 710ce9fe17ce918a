"""SKOS integrity warnings at load (as Skosify/qSKOS check): the source still loads, and the
user is told what looks wrong, how often, with examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.store import EmbeddedStore
from loaders import load_file

BROKEN = """@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ex: <http://example.org/t/> .
ex:s a skos:ConceptScheme .
ex:bank a skos:Concept ; skos:inScheme ex:s ;
    skos:prefLabel "bank"@en, "financial institution"@en, "Bank"@de ;
    skos:altLabel "bank"@en .
ex:a a skos:Concept ; skos:prefLabel "a"@en ; skos:broader ex:b .
ex:b a skos:Concept ; skos:prefLabel "b"@en ; skos:broader ex:a .
ex:self a skos:Concept ; skos:prefLabel "self"@en ; skos:broader ex:self .
ex:c a skos:Concept ; skos:prefLabel "c"@en ; skos:narrower "not a concept" ;
    skos:related "also not" .
"""
CLEAN = """@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ex: <http://example.org/t/> .
ex:a a skos:Concept ; skos:prefLabel "a"@en, "A"@de ; skos:altLabel "ay"@en ; skos:broader ex:b .
ex:b a skos:Concept ; skos:prefLabel "b"@en ; skos:narrower ex:a .
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_broken_skos_loads_with_a_warning_per_problem(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    rep = load_file(mem_store, write(tmp_path, "broken.ttl", BROKEN))
    assert rep.kind == "skos" and rep.concepts == 5
    w = "\n".join(rep.warnings)
    assert len(rep.warnings) == 5, rep.warnings
    assert "1 concept(s) with two or more skos:prefLabel in one language" in w
    assert "<http://example.org/t/bank> (en: 2)" in w
    assert "3 concept(s) broader than themselves" in w and "<http://example.org/t/self>" in w
    assert "1 narrower statement(s) with a literal object" in w
    assert "1 related statement(s) with a literal object" in w
    assert "1 label(s) both preferred and alternative" in w
    assert all("\n" not in x for x in rep.warnings)


def test_clean_skos_has_no_warnings(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    assert load_file(mem_store, write(tmp_path, "clean.ttl", CLEAN)).warnings == ()


def test_rdf_without_skos_or_ontolex_says_nothing_can_annotate(mem_store: EmbeddedStore,
                                                               tmp_path: Path) -> None:
    rep = load_file(mem_store, write(tmp_path, "foaf.ttl",
                                     '<http://example.org/p> <http://xmlns.com/foaf/0.1/name> "P" .\n'))
    assert rep.kind == "rdf" and len(rep.warnings) == 1 and "nothing in this file" in rep.warnings[0]


def test_the_cli_prints_the_warnings_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "broken.ttl", BROKEN)
    assert main(["--store", str(tmp_path / "store"), "load", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "5 concepts" in out
    assert err.count("  warning: ") == 5


def test_a_mapping_file_between_schemes_is_no_warning(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    rep = load_file(mem_store, write(tmp_path, "map.ttl",
                                     "<http://example.org/a> <http://www.w3.org/2004/02/skos/core#exactMatch> "
                                     "<http://example.org/b> .\n"))
    assert rep.warnings == ()
