"""Signals of sense-only readings: where a lemma sits in a Hebrew word, parts of speech from its
affixes and neighbours, the entry-length prior."""

from __future__ import annotations

from kg_rag.model import Candidate, LangText, SenseEvidence
from kg_rag.senses.knowledge.config import PosCues
from kg_rag.senses.knowledge.dictionary import hebrew_pos_scores, richness_prior, sense_only
from kg_rag.text.hebrew_affixes import split_affixes


def test_split_affixes_finds_the_lemma_with_weak_letters_and_a_final_he() -> None:
    assert split_affixes("וכבשה", "כבש") == ("ו", "כבש", "ה")
    assert split_affixes("שומרים", "שמר") == ("", "שומר", "ים")
    assert split_affixes("תפלתי", "תפלה") == ("", "תפלת", "י")
    assert split_affixes("ויבז", "בזה") == ("וי", "בז", "")
    assert split_affixes("ספר", "כבש") is None


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
