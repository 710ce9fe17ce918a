"""Readings that look the same (a Hebrew WordNet word: every synset labelled by the word, with
only an English gloss on its ILI node) are told apart by their definitions on display."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.pipeline.retrieve import _cut

# two synsets, OMW-style: the Hebrew lexicon's senses point at ILI nodes that carry only the
# English definitions (as OEWN's synsets do)
TTL = """
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix lexinfo: <http://www.lexinfo.net/ontology/3.0/lexinfo#> .
@prefix lime: <http://www.w3.org/ns/lemon/lime#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix ili: <http://globalwordnet.github.io/ili/> .
@prefix l: <https://example.org/gl/lex/> .

ili:i1 a ontolex:LexicalConcept ; skos:definition "a financial institution that accepts deposits"@en .
ili:i2 a ontolex:LexicalConcept ; skos:definition "sloping land beside a body of water"@en .
ili:i3 a ontolex:LexicalConcept ; skos:definition "a long seat for several people"@en .
l:he a lime:Lexicon ; lime:language "he" ; lime:entry l:bank, l:seat .
l:bank a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "גדה"@he ] ;
    ontolex:sense [ ontolex:isLexicalizedSenseOf ili:i1 ], [ ontolex:isLexicalizedSenseOf ili:i2 ] .
l:seat a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "ספסל"@he ] ;
    ontolex:sense [ ontolex:isLexicalizedSenseOf ili:i3 ] .
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("gl")
    (d / "he.ttl").write_text(TTL, encoding="utf-8")
    assert main(["--store", str(d / "store"), "load", str(d / "he.ttl")]) == 0
    return d / "store"


def test_same_looking_readings_show_their_english_gloss(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["--store", str(store), "annotate", "--lang", "he", "--wsd", "none", "ישבנו על הגדה ועל ספסל"]) == 0
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if "גדה" in x and "(" in x]
    assert len(lines) == 2, out
    assert any("— a financial institution that accepts deposits" in x for x in lines), out
    assert any("— sloping land beside a body of water" in x for x in lines), out
    # an unambiguous reading, or readings with their own labels, are not glossed
    assert "a long seat" not in out


def test_a_long_gloss_is_cut_at_a_word() -> None:
    assert _cut("short", 10) == "short"
    assert _cut("a financial institution that accepts deposits", 20) == "a financial…"
    assert len(_cut("x" * 50, 20)) == 20
