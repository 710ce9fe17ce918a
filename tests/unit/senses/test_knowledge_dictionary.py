"""Signals of sense-only readings: where a lemma sits in a Hebrew word, parts of speech from its
affixes and neighbours, the entry-length prior."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.model import Candidate, LangText, Mention, SelectionRequest, SenseEvidence
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.config import PosCues
from kg_rag.senses.knowledge.dictionary import (
    hebrew_pos_scores,
    pos_fit,
    richness_prior,
    sense_only,
)
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from kg_rag.text.hebrew_affixes import split_affixes, split_weak


def test_split_affixes_finds_the_lemma_with_weak_letters_and_a_final_he() -> None:
    assert split_affixes("וכבשה", "כבש") == ("ו", "כבש", "ה")
    assert split_affixes("שומרים", "שמר") == ("", "שומר", "ים")
    assert split_affixes("תפלתי", "תפלה") == ("", "תפלת", "י")
    assert split_affixes("ויבז", "בזה") == ("וי", "בז", "")
    assert split_affixes("ספר", "כבש") is None


def test_split_weak_finds_a_root_that_lost_a_weak_radical() -> None:
    assert split_weak("ויקץ", "קוץ") == ("וי", "קץ", "")      # hollow: the middle ו gone
    assert split_weak("גל", "גלל") == ("", "גל", "")          # geminate: the last radical once
    assert split_weak("ותשק", "נשק") == ("ות", "שק", "")      # first נ assimilated
    assert split_weak("שקים", "נשק") is None                  # no prefix-conjugation letter
    assert split_weak("שומרים", "שמר") is None                # split_affixes places it


def test_hebrew_pos_cues_where_the_article_cannot_be() -> None:
    cues = PosCues()
    for word, lemma in (("להבזות", "בזה"), ("המחכים", "חכה"), ("והשבתי", "שבת"), ("ויקץ", "קוץ")):
        s = hebrew_pos_scores(word, lemma, cues)
        assert s["verb"] > s["noun"], word
    # the participle's ו: still a noun's article and plural, but the verb is raised
    assert hebrew_pos_scores("היוצרים", "יצר", cues)["verb"] > hebrew_pos_scores("היצרים", "יצר", cues)["verb"]
    attribute = hebrew_pos_scores("השחרים", "שחר", cues, "הסוסים", "")
    assert attribute["adjective"] > attribute["noun"] - cues.medium
    assert hebrew_pos_scores("הנער", "נער", cues)["noun"] > 0.0   # the article still says noun


def test_hebrew_pos_cues_tell_a_verb_from_a_noun() -> None:
    cues = PosCues()
    verb = hebrew_pos_scores("וינער", "נער", cues, "", "את")
    noun = hebrew_pos_scores("הנער", "נער", cues, "את", "")
    assert verb["verb"] > verb["noun"] and noun["noun"] > noun["verb"]
    bare = hebrew_pos_scores("נער", "נער", cues)
    assert bare["noun"] == bare["verb"] == 0.0


def test_sense_only_and_the_entry_length_prior() -> None:
    a = Candidate("http://x/s1", "http://x/s1", lemma="bass", lang="en")
    b = Candidate("http://x/s2", "http://x/s2", lemma="bass", lang="en")
    assert sense_only((a, b)) and not sense_only((a, Candidate("http://x/c", "http://x/s3")))
    long = SenseEvidence(a, definitions=(LangText("a freshwater fish caught in lakes", "en"),),
                         usage=(LangText("angling; sport fishing", "en"),))
    short = SenseEvidence(b, definitions=(LangText("a low voice", "en"),))
    p_long, p_short = richness_prior((long, short))
    assert p_long > p_short > 0.0


def _ran_request(lang: str = "he") -> SelectionRequest:
    # רק: Strong's has an adverb ('only') and a noun ('spittle'); a bare form, no affix to go by
    adv = Candidate("http://x/oshb/H7535", "http://x/oshb/H7535", entry="http://x/oshb/e7535",
                    lemma="רק", lang=lang, pos="adverb")
    noun = Candidate("http://x/oshb/H7536", "http://x/oshb/H7536", entry="http://x/oshb/e7536",
                     lemma="רק", lang=lang, pos="noun")
    text = "רק טוב יהיה"
    return SelectionRequest(Mention(0, 2, "רק", lang, (adv, noun)), text, lang,
                            (SenseEvidence(adv), SenseEvidence(noun)))


def test_the_other_lexicons_parts_of_speech_weigh_in() -> None:
    req, cues = _ran_request(), PosCues()
    plain = pos_fit(req, cues)
    assert plain is not None and plain[0] == plain[1]   # the spelling says nothing
    asked: list[SelectionRequest] = []

    def elsewhere(r: SelectionRequest) -> dict[str, int]:
        asked.append(r)
        return {"other": 3, "verb": 5}   # the verbs are no candidate's kind: they do not count
    adv, noun = pos_fit(req, cues, elsewhere) or []
    assert asked == [req]
    assert adv - plain[0] == pytest.approx(math.log(4 / 5)) and noun - plain[1] == pytest.approx(math.log(1 / 5))
    # nothing known elsewhere, or not Hebrew, or one part of speech: no change, not even asked
    assert pos_fit(req, cues, lambda r: {}) == plain
    assert pos_fit(_ran_request("en"), cues, elsewhere) is None and len(asked) == 1


def test_the_selector_reads_the_other_lexicons_of_the_store(mem_store: EmbeddedStore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A concept-less dictionary's candidates, and a wordnet-like lexicon of the same language
    that has the bare form as an adverb only: the selector counts that reading, not its own."""
    ttl = """
@prefix ontolex: <http://www.w3.org/ns/lemon/ontolex#> .
@prefix lexinfo: <http://www.lexinfo.net/ontology/3.0/lexinfo#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix lime: <http://www.w3.org/ns/lemon/lime#> .
<http://x/dict> a lime:Lexicon ; lime:language "he" ; lime:entry <http://x/oshb/e7535>, <http://x/oshb/e7536> .
<http://x/oshb/e7535> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:adverb ;
    ontolex:canonicalForm [ ontolex:writtenRep "רק"@he ] ; ontolex:sense <http://x/oshb/H7535> .
<http://x/oshb/H7535> a ontolex:LexicalSense ; skos:definition "only"@en .
<http://x/oshb/e7536> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:noun ;
    ontolex:canonicalForm [ ontolex:writtenRep "רק"@he ] ; ontolex:sense <http://x/oshb/H7536> .
<http://x/oshb/H7536> a ontolex:LexicalSense ; skos:definition "spittle; saliva"@en .
<http://x/modern> a lime:Lexicon ; lime:language "he" ; lime:entry <http://x/modern/rak> .
<http://x/modern/rak> a ontolex:LexicalEntry ; lexinfo:partOfSpeech lexinfo:adverb ;
    ontolex:canonicalForm [ ontolex:writtenRep "רק"@he ] ; ontolex:sense <http://x/modern/rak-1> .
<http://x/modern/rak-1> a ontolex:LexicalSense ; ontolex:reference <http://x/concept/only> .
<http://x/concept/only> a skos:Concept ; skos:prefLabel "only"@en .
"""
    kg = KnowledgeGraph(mem_store)
    path = Path(tempfile.mkdtemp()) / "two-lexicons.ttl"
    path.write_text(ttl, encoding="utf-8")
    kg.load([path])
    own = tuple(c for c in kg.annotator.candidates_for_lemma("רק", "he") if c.sense and "/oshb/" in c.sense)
    assert len(own) == 2 and sense_only(own)
    req = SelectionRequest(Mention(0, 2, "רק", "he", own), "רק טוב יהיה", "he",
                           tuple(fetch_evidence(mem_store, own)))
    assert [len(e.definitions) for e in req.evidence] == [1, 1]
    sel = KnowledgeSelector(mem_store)
    assert sel._kinds_elsewhere(req) == {"other": 1}   # the modern adverb; Strong's own two left out
    chosen = sel.select([req])[0].chosen
    assert chosen is not None and chosen.pos == "adverb"
    # without it the longer entry (the noun) wins: the entry-length prior
    monkeypatch.setattr(KnowledgeSelector, "_kinds_elsewhere", lambda self, r: {})
    alone = KnowledgeSelector(mem_store).select([req])[0].chosen
    assert alone is not None and alone.pos == "noun"
