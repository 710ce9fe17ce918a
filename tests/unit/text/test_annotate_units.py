"""Normalisation offsets, Hebrew prefix rules, analyses, stop words, lexicon index."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from kg_rag.annotate import Lexicon
from kg_rag.annotate.lexicon import scan_form
from kg_rag.text.analyse import analyses, fallback_forms, stopwords
from kg_rag.text.hebrew import PREFIXES, prefix_splits, suffix_guesses
from kg_rag.text.normalise import match_key
from kg_rag.text.tokenise import WORD, normalise


def test_normalised_words_are_match_keys_and_map_back() -> None:
    text = "Die STRASSE\u200f und Straße  —  הַבַּדִּים\n\nfin"
    n = normalise(text)
    assert "\n\n" in n.norm and len(n.scan) == len(n.norm)
    words = []
    for s, e in n.words():
        orig = n.text[n.orig_start(s) : n.orig_end(e)]
        assert match_key(orig) == n.norm[s:e], orig
        words.append(orig)
    assert words == ["Die", "STRASSE", "und", "Straße", "הַבַּדִּים", "fin"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcßİ ,.\n\t'-") + ["\u05d1", "\u05bc", "\u05b7", "\u200f",
                                                                     "\u05d3", "\u064e", "\u0628", "\ufb01"]),
               max_size=40))
def test_offsets_round_trip(text: str) -> None:
    n = normalise(text)
    assert len(n.scan) == len(n.norm)
    for s, e in n.words():
        os_, oe = n.orig_start(s), n.orig_end(e)
        assert 0 <= os_ < oe <= len(n.text)
        assert match_key(n.text[os_:oe]) == unicodedata.normalize("NFC", n.norm[s:e])


def test_hebrew_prefix_order() -> None:
    assert {"ו", "ה", "וה", "שב", "וכש", "מה", "וכשה", "ושה", "ב", "ל", "כ", "מ", "ש"} <= PREFIXES
    # the article is elided after ב כ ל; ה never comes before other prefix letters
    assert not {"בה", "לה", "כה", "הב", "הו", "בו", "שו"} & PREFIXES
    assert prefix_splits("וכשהגבר") == (("ו", "כשהגבר"), ("וכ", "שהגבר"), ("וכש", "הגבר"), ("וכשה", "גבר"))
    assert prefix_splits("הבר") == (("ה", "בר"),)
    assert prefix_splits("בר") == ()  # a stem keeps two letters


def test_suffix_guesses() -> None:
    assert "ענף" in suffix_guesses("ענפים")
    assert {"מכונ", "מכונה"} & set(suffix_guesses("מכונות"))
    assert suffix_guesses("בר") == ()


def test_analyses_keep_every_reading() -> None:
    forms = dict(analyses("הגבר", "הגבר", "he"))
    assert forms["הגבר"] == "surface" and forms["גבר"] == "prefix:ה"
    assert any(how == "lemma" for how in forms.values())  # simplemma reads it as a verb too
    assert dict(analyses("branches", "branches", "en"))["branch"] == "lemma"
    assert analyses("the", "The", "en") == ()
    assert ("גבר", "prefix:ה+suffix") in fallback_forms("הגברים", "he")
    assert fallback_forms("trees", "en") == ()


def test_stopword_lists() -> None:
    for lang in ("en", "de", "fr", "es", "he", "ar"):
        words = stopwords(lang)
        assert len(words) > 40, lang
        assert all(w == match_key(w) for w in words)
    assert stopwords("xx") == frozenset()


def test_scan_form_keeps_length() -> None:
    for key in ("fruit tree", "rock 'n' roll", "u.s.", "צה\"ל", "c++"):
        f = scan_form(key)
        assert len(f) == len(key) and WORD.sub(lambda m: m.group(), f) == f


def test_lexicon_index_from_rows() -> None:
    rows = [("fruit tree", "en", "E1"), ("fruit", "en-GB", "E2"), ("fruit", "en", "C1"),
            ("u.s.", "en", "C2"), ("u s", "en", "C3"), ("unesco", "", "C4"), ("בד", "he", "E3"),
            ("fruit", "en", "E2")]
    lex = Lexicon(rows, version="v")
    assert lex.languages == ("", "en", "he") and lex.version == "v"
    [kid] = lex.word("en", "fruit")
    assert sorted(lex.targets[t] for t in lex.owners(kid)) == ["C1", "E2"]
    assert lex.word("he", "fruit") == [] and len(lex.word("he", "unesco")) == 1
    # punctuation is blurred for the scan but a hit must equal its key exactly
    norm = "the u.s. and u s fruit tree"
    n = normalise(norm)
    hits = [(norm[h.start : h.end], lex.keys[h.kid]) for h in lex.scan("en", n.scan, n.norm)]
    assert sorted(hits) == [("fruit tree", "fruit tree"), ("u s", "u s"), ("u.s.", "u.s.")]
    assert lex.lookup("en", "u.s.") != lex.lookup("en", "u s")
    assert lex.phrase_prefix("en", "fruit ") and not lex.phrase_prefix("en", "tree ")
    assert lex.stats() == {"keys": 6, "owners": 7, "languages": 3, "phrases": 3}


def test_arabic_article_and_proclitics_are_analyses() -> None:
    forms = dict(analyses("الطبيعية", "الطبيعية", "ar"))
    assert forms["طبيعية"] == "prefix:ال"          # the label's word, not simplemma's masculine
    from kg_rag.text.arabic import prefix_splits as ar_splits

    assert ar_splits("والطبيعية") == (("وال", "طبيعية"),)
    assert ar_splits("للمحمية") == (("لل", "محمية"),)
    assert ar_splits("الم") == ()                  # ال + one letter is no article and a stem


def test_an_arabic_phrase_with_the_article_on_each_word_meets_its_label() -> None:
    """The demo's *محمية طبيعية* (nature reserve), as its Arabic document writes it."""
    from kg_rag import KnowledgeGraph
    from kg_rag.resources import resource_path
    from kg_rag.store import EmbeddedStore

    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([resource_path("demo") / "thesaurus.ttl"])
    reserve = "https://w3id.org/kg-rag/demo/concept/nature-reserve"
    for text in ("المحمية الطبيعية", "في المحمية الطبيعية", "بالمحمية الطبيعية", "محمية طبيعية"):
        found = {(r.mention.text, c.concept) for r in kg.annotate(text, lang="ar", wsd="none",
                                                                 record_question=False)
                 for c in r.mention.candidates}
        assert (text.removeprefix("في "), reserve) in found, (text, found)
