"""The annotator on the paper's four Hebrew sentences and on English/German/MWE cases,
against the small fixture dictionary tests/data/annotate/dictionary.trig."""

from __future__ import annotations

import unicodedata

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg_rag.annotate import Lexicon, LexiconAnnotator
from kg_rag.derived import catalog_version
from kg_rag.errors import InputError
from kg_rag.model import Mention
from kg_rag.store import EmbeddedStore
from tests.support.paths import DATA

DATA = DATA / "annotate" / "dictionary.trig"
C = "https://example.org/test/concept/"


@pytest.fixture(scope="module")
def store() -> EmbeddedStore:
    s = EmbeddedStore(":memory:")
    s.oxigraph.load(path=str(DATA), format=pyoxigraph.RdfFormat.TRIG)
    return s


@pytest.fixture(scope="module")
def ann(store: EmbeddedStore) -> LexiconAnnotator:
    return LexiconAnnotator(store)


def concepts(m: Mention) -> set[str]:
    return {c.removeprefix(C) for c in m.concepts}


def only(mentions: list[Mention], surface: str) -> Mention:
    found = [m for m in mentions if m.text == surface]
    assert len(found) == 1, f"expected one mention {surface!r}, got {[m.text for m in mentions]}"
    return found[0]


def check_offsets(text: str, mentions: list[Mention]) -> None:
    nfc = unicodedata.normalize("NFC", text)
    for m in mentions:
        assert nfc[m.start : m.end] == m.text


def test_example_1_bad_plural_with_article(ann: LexiconAnnotator) -> None:
    text = "הפירות העמיסו על הבדים"
    ms = ann.annotate(text, "he")
    check_offsets(text, ms)
    m = only(ms, "הבדים")
    assert (m.start, m.end) == (17, 22)
    assert concepts(m) == {"fabric", "branch"} and m.ambiguous
    assert [c.concept.removeprefix(C) for c in m.candidates] == ["fabric", "branch"]  # sense order
    assert [c.rank for c in m.candidates] == [1, 2]
    assert all(c.entry and c.entry.endswith("/he/bad") for c in m.candidates)
    assert {c.matched_by for c in m.candidates} <= {"lemma", "prefix:ה", "prefix:ה+lemma"}
    assert "על" not in [x.text for x in ms]  # a stop word, although it is in the dictionary


def test_example_2_bar(ann: LexiconAnnotator) -> None:
    text = "שמירה על הבר עמדה במוקד עיסוקיו"
    m = only(ann.annotate(text, "he"), "הבר")
    assert text[m.start : m.end] == "הבר"
    assert concepts(m) == {"pub", "wilderness"}


def test_example_3_verb_mitég(ann: LexiconAnnotator) -> None:
    text = "הוא מיתג את הדחף לצפות בחדשות"
    ms = ann.annotate(text, "he")
    check_offsets(text, ms)
    m = only(ms, "מיתג")
    assert concepts(m) == {"brand", "restrain"}
    assert {c.matched_by for c in m.candidates} == {"surface"}
    assert {c.pos for c in m.candidates} == {"verb"}
    assert concepts(only(ms, "בחדשות")) == {"news"}
    assert only(ms, "בחדשות").candidates[0].matched_by == "prefix:ב"
    # the infinitive is another written form of the same entry
    assert concepts(only(ann.annotate("קשה למתג את זה", "he"), "למתג")) == {"brand", "restrain"}


def test_example_4_gever_man_or_rooster(ann: LexiconAnnotator) -> None:
    text = "הגבר קרא בקול עם הזריחה"
    ms = ann.annotate(text, "he")
    m = only(ms, "הגבר")
    assert (m.start, m.end) == (0, 4)
    assert concepts(m) == {"man", "rooster"}
    assert m.candidates[0].matched_by == "prefix:ה"
    assert "עם" not in [x.text for x in ms]


def test_niqqud_and_mark_order(ann: LexiconAnnotator) -> None:
    # gimel with dagesh and segol in both orders (NFC puts segol, class 13, before dagesh, 21)
    a = "\u05d4\u05b7\u05d2\u05bc\u05b6\u05d1\u05b6\u05e8 \u05e7\u05b8\u05e8\u05b8\u05d0"
    b = a.replace("\u05bc\u05b6", "\u05b6\u05bc")
    assert a != b and unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)
    for text in (a, b):
        ms = ann.annotate(text, "he")
        check_offsets(text, ms)
        assert [m.text for m in ms] == [unicodedata.normalize("NFC", text).split()[0]]
        assert concepts(ms[0]) == {"man", "rooster"}
    # a point after the last letter belongs to the mention
    ms = ann.annotate("עַל הַבַּדִּים׃", "he")
    m = only(ms, "הַבַּדִּים")
    assert concepts(m) == {"fabric", "branch"}


def test_english_lemma_and_thesaurus_label(ann: LexiconAnnotator) -> None:
    text = "The fruits weighed down the branches."
    ms = ann.annotate(text, "en")
    check_offsets(text, ms)
    m = only(ms, "branches")
    assert concepts(m) == {"branch"}
    c = m.candidates[0]
    assert (c.matched_by, c.sense_key, c.ili, c.pos, c.lemma) == ("lemma", "branch%1:20:00::", None, "noun", "branch")
    fruit = only(ms, "fruits").candidates[0]
    assert fruit.sense is None and fruit.entry is None and fruit.lemma == "fruit"  # label match
    assert not any(x.text.lower() == "the" for x in ms)


def test_concept_reached_by_a_sense_is_not_repeated_as_a_label_match(ann: LexiconAnnotator) -> None:
    m = only(ann.annotate("a bank", "en"), "bank")
    assert all(c.sense is not None for c in m.candidates)
    # by entry, then sense rank, then IRI
    assert [(c.entry.rsplit("/", 1)[1], c.rank) for c in m.candidates] == [("bank-n", 1), ("bank-n", 2), ("bank-v", 1)]
    assert [c.ili for c in m.candidates] == ["i85041", None, None]
    nouns = only(ann.annotate("a bank", "en", pos="NOUN"), "bank")
    assert {c.pos for c in nouns.candidates} == {"noun"}
    with pytest.raises(InputError):
        ann.annotate("a bank", "en", pos="gerundive")


def test_fixed_phrase_hides_nested_words(ann: LexiconAnnotator) -> None:
    text = "A fruit tree grew there."
    ms = ann.annotate(text, "en")
    m = only(ms, "fruit tree")
    assert m.fixed_phrase and concepts(m) == {"fruit-tree"}
    assert m.candidates[0].matched_by == "mwe"
    assert [x.text for x in ms] == ["fruit tree"]


def test_phrase_through_lemma_keeps_nested_alternatives(ann: LexiconAnnotator) -> None:
    text = "Old fruit trees."
    ms = ann.annotate(text, "en")
    check_offsets(text, ms)
    assert [x.text for x in ms] == ["fruit trees", "fruit", "trees"]
    assert not ms[0].fixed_phrase and ms[0].candidates[0].matched_by == "mwe+lemma"
    assert concepts(ms[2]) == {"tree"}


def test_hebrew_phrase_with_prefix(ann: LexiconAnnotator) -> None:
    ms = ann.annotate("נטעו ועצי פרי", "he")
    assert ms[0].text == "ועצי פרי" and concepts(ms[0]) == {"fruit-tree"}
    assert not ms[0].fixed_phrase
    fixed = ann.annotate("עץ פרי", "he")
    assert [x.text for x in fixed] == ["עץ פרי"] and fixed[0].fixed_phrase


def test_phrases_do_not_cross_punctuation_or_paragraphs(ann: LexiconAnnotator) -> None:
    assert "fruit, tree" not in [m.text for m in ann.annotate("fruit, tree", "en")]
    texts = [m.text for m in ann.annotate("fruit\n\ntree", "en")]
    assert texts == ["fruit", "tree"]
    assert [m.text for m in ann.annotate("fruit\ntree", "en")] == ["fruit\ntree"]


def test_punctuated_key_and_untagged_label(ann: LexiconAnnotator) -> None:
    ms = ann.annotate("UNESCO likes Rock 'n' Roll!", "en")
    assert [m.text for m in ms] == ["UNESCO", "Rock 'n' Roll"]
    assert ms[1].fixed_phrase
    # an untagged label matches in any language
    assert only(ann.annotate("הכנס של UNESCO", "he"), "UNESCO").candidates[0].concept == C + "unesco"


def test_only_the_language_of_the_text(ann: LexiconAnnotator) -> None:
    # "Zweig" is a German written form and label; it is not English
    assert ann.annotate("zweig", "en") == []
    assert concepts(only(ann.annotate("Die Zweige", "de"), "Zweige")) == {"branch"}


def test_german_compound_lemma(ann: LexiconAnnotator) -> None:
    m = only(ann.annotate("Die Obstbäume blühen", "de"), "Obstbäume")
    assert concepts(m) == {"fruit-tree"} and m.candidates[0].matched_by == "lemma"


def test_hebrew_suffix_guess_only_as_fallback(ann: LexiconAnnotator) -> None:
    # "גברים" — simplemma may or may not know it; the suffix guess reaches גבר either way
    m = only(ann.annotate("שני גברים", "he"), "גברים")
    assert concepts(m) == {"man", "rooster"}
    assert m.candidates[0].matched_by in ("lemma", "suffix")
    # a word that matches on the surface gets no suffix guesses
    assert all(c.matched_by == "surface" for c in only(ann.annotate("מיתג", "he"), "מיתג").candidates)


def test_empty_and_bad_input(ann: LexiconAnnotator) -> None:
    assert ann.annotate("", "he") == []
    assert ann.annotate("   \n ", "en") == []
    assert ann.annotate("על את של", "he") == []
    with pytest.raises(InputError, match="unsupported language"):
        ann.annotate("הבר", "xx")
    with pytest.raises(InputError):
        ann.annotate("הבר", "")


def test_candidates_for_lemma(ann: LexiconAnnotator) -> None:
    cs = ann.candidates_for_lemma("Bank", "en")
    assert [(c.sense_key, c.rank) for c in cs] == [
        ("bank%1:17:01::", 1), ("bank%1:14:00::", 2), ("bank%2:31:00::", 1)]
    assert [c.sense_key for c in ann.candidates_for_lemma("bank", "en", pos="v")] == ["bank%2:31:00::"]
    assert [c.concept.removeprefix(C) for c in ann.candidates_for_lemma("גֶּבֶר", "he")] == ["man", "rooster"]
    assert ann.candidates_for_lemma("bank", "de") == ()
    assert ann.candidates_for_lemma("no-such-word", "en") == ()


def test_lexicon_version_changes_with_the_store(store: EmbeddedStore) -> None:
    lex = Lexicon.from_store(store)
    assert lex.version == catalog_version(store)
    assert {"he", "en", "de", ""} <= set(lex.languages)
    other = EmbeddedStore(":memory:")
    assert catalog_version(other) != lex.version
    assert len(Lexicon.from_store(other)) == 0
    assert LexiconAnnotator(other).annotate("הגבר", "he") == []


_PIECES = ["הגבר", "הַבַּדִּים", "בר", "עץ", "פרי", "ועצי", "fruit", "Trees", "tree", "bank", "UNESCO",
           "rock 'n' roll", "the", "על", "\u200f", "\u05b8", ",", ".", " ", "  ", "\n", "\n\n", "ß", "x"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.sampled_from(["he", "en"]))
def test_mentions_are_exact_slices_and_well_nested(ann: LexiconAnnotator, pieces: list[str], lang: str) -> None:
    text = "".join(pieces)
    ms = ann.annotate(text, lang)
    nfc = unicodedata.normalize("NFC", text)
    for m in ms:
        assert nfc[m.start : m.end] == m.text and m.text.strip() == m.text and m.candidates
        assert m.lang == lang
    # mentions either nest or are disjoint; nothing sits inside a fixed phrase
    for a in ms:
        for b in ms:
            if a is b or a.end <= b.start or b.end <= a.start:
                continue
            outer, inner = (a, b) if (a.end - a.start) >= (b.end - b.start) else (b, a)
            assert outer.start <= inner.start and inner.end <= outer.end
            assert not outer.fixed_phrase


def test_entries_read_from_the_lemma_index_as_the_query_reads_them(store: EmbeddedStore) -> None:
    """The annotator takes a dictionary entry's readings from the lemma index when the store has
    one (this small store builds it on first use): exactly what select-candidates gives, for
    every owner of every key of the fixture; thesaurus concepts are left to the query."""
    from kg_rag.annotate.candidates import indexed_readings, readings_of

    lex = LexiconAnnotator(store).lexicon
    by_lang: dict[str, dict[str, str]] = {}
    for kid, key in enumerate(lex.keys):
        for lang in ("en", "he", "de"):
            if kid in lex.word(lang, key):
                for tid in lex.owners(kid):
                    by_lang.setdefault(lang, {}).setdefault(lex.targets[tid], key)
    entries = concepts_left = 0
    for lang, keys in by_lang.items():
        indexed = indexed_readings(store, keys, lang)
        queried = readings_of(store, list(keys), lang)
        for owner, readings in indexed.items():
            assert readings == queried[owner], owner
        entries += len(indexed)
        concepts_left += sum(1 for o in keys if o not in indexed and queried[o])
    assert entries > 10 and concepts_left > 0
