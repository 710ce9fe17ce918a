"""Fixed figurative phrases (DATA-MODEL.md "Figurative phrases"): an idiom entry is one mention
with its figurative sense, however it was matched, and its words are not read literally."""

from __future__ import annotations

from pathlib import Path

import pytest

import loaders
from kg_rag.annotate import LexiconAnnotator
from kg_rag.model import Mention
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

C = "https://example.org/fig/concept/"
DEMO = resource_path("demo")

TTL = """
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix lexinfo: <http://www.lexinfo.net/ontology/3.0/lexinfo#> .
@prefix lime: <http://www.w3.org/ns/lemon/lime#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix c: <https://example.org/fig/concept/> .
@prefix l: <https://example.org/fig/lex/> .

c:s a skos:ConceptScheme .
c:ice a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "ice"@en .
c:fracture a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "fracture"@en .
c:ease a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "putting at ease"@en .
c:death a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "death"@en .
c:bucket a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "bucket"@en .
c:fruit-tree a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "fruit tree"@en .
c:fruit a skos:Concept ; skos:inScheme c:s ; skos:prefLabel "fruit"@en .

l:en a lime:Lexicon ; lime:language "en" ;
    lime:entry l:break, l:ice, l:break-the-ice, l:kick-the-bucket, l:bucket .
l:break a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:verb ;
    ontolex:canonicalForm [ ontolex:writtenRep "break"@en ] ; ontolex:otherForm [ ontolex:writtenRep "broke"@en ] ;
    ontolex:sense [ ontolex:reference c:fracture ] .
l:ice a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "ice"@en ] ; ontolex:sense [ ontolex:reference c:ice ] .
l:bucket a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "bucket"@en ] ; ontolex:sense [ ontolex:reference c:bucket ] .
# an idiom by its term type
l:break-the-ice a ontolex:LexicalEntry, ontolex:MultiwordExpression ; lexinfo:termType lexinfo:idiom ;
    lexinfo:partOfSpeech lexinfo:verb ;
    ontolex:canonicalForm [ ontolex:writtenRep "break the ice"@en ] ;
    ontolex:sense [ ontolex:reference c:ease ] .
# an idiom by its sense's usage note, as a DMLex label becomes
l:kick-the-bucket a ontolex:LexicalEntry, ontolex:MultiwordExpression ; lexinfo:partOfSpeech lexinfo:verb ;
    ontolex:canonicalForm [ ontolex:writtenRep "kick the bucket"@en ] ;
    ontolex:sense [ ontolex:reference c:death ; lexinfo:usageNote "figurative, informal"@en ] .
"""


@pytest.fixture(scope="module")
def ann(tmp_path_factory: pytest.TempPathFactory) -> LexiconAnnotator:
    path: Path = tmp_path_factory.mktemp("fig") / "fig.ttl"
    path.write_text(TTL, encoding="utf-8")
    store = EmbeddedStore(":memory:")
    loaders.load_file(store, path)
    return LexiconAnnotator(store)


def spans(ms: list[Mention]) -> list[tuple[str, set[str]]]:
    return [(m.text, {c.removeprefix(C) for c in m.concepts}) for m in ms]


def test_an_idiom_on_the_surface_is_one_mention(ann: LexiconAnnotator) -> None:
    assert spans(ann.annotate("At the party she tried to break the ice.", "en")) == [
        ("break the ice", {"ease"})]


def test_an_idiom_found_through_analyses_keeps_no_literal_words(ann: LexiconAnnotator) -> None:
    # "breaking" reaches "break" only through its lemma: before, the words of such a phrase
    # stayed as nested mentions (fracture, ice)
    ms = ann.annotate("He kept breaking the ice with a joke.", "en")
    assert spans(ms) == [("breaking the ice", {"ease"})]
    assert ms[0].fixed_phrase and not ms[0].ambiguous


def test_a_usage_note_marks_an_idiom_too(ann: LexiconAnnotator) -> None:
    assert spans(ann.annotate("The old horse kicked the bucket last winter.", "en")) == [
        ("kicked the bucket", {"death"})]


def test_the_same_words_outside_the_idiom_are_read_literally(ann: LexiconAnnotator) -> None:
    got = spans(ann.annotate("Break the ice on the bucket.", "en"))
    assert ("Break the ice", {"ease"}) in got and ("bucket", {"bucket"}) in got
    assert spans(ann.annotate("The ice in the bucket will break.", "en")) == [
        ("ice", {"ice"}), ("bucket", {"bucket"}), ("break", {"fracture"})]


@pytest.fixture(scope="module")
def demo() -> LexiconAnnotator:
    store = EmbeddedStore(":memory:")
    for f in ("thesaurus.ttl", "dictionary.ttl"):
        loaders.load_file(store, DEMO / f)
    return LexiconAnnotator(store)


@pytest.mark.parametrize("text, phrase", [
    ("היא המשיכה לעבוד כשכרסה בין שיניה", "כשכרסה בין שיניה"),       # prefixed (כש)
    ("וכרסה בין שיניה, והיא עדיין נוסעת לעבודה", "וכרסה בין שיניה"),  # prefixed (ו), found through analyses
    ("את עובדת כשכרסך בין שינייך?", "כשכרסך בין שינייך"),             # inflected (you, f.)
])
def test_the_paper_idiom_in_hebrew(demo: LexiconAnnotator, text: str, phrase: str) -> None:
    ms = demo.annotate(text, "he")
    fig = [m for m in ms if m.text == phrase]
    assert len(fig) == 1 and fig[0].concepts == ("https://w3id.org/kg-rag/demo/concept/pregnancy",)
    inside = [m for m in ms if fig[0].start <= m.start and m.end <= fig[0].end]
    assert inside == fig      # no armchair (כורסה), no tooth (שן)


def test_its_words_alone_are_still_read_literally(demo: LexiconAnnotator) -> None:
    got = {m.text: m.concepts for m in demo.annotate("היא קנתה כורסה וכאבה לה שן", "he")}
    assert got == {"כורסה": ("https://w3id.org/kg-rag/demo/concept/armchair",),
                   "שן": ("https://w3id.org/kg-rag/demo/concept/tooth",)}
