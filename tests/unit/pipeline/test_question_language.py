"""The language of a question on the demo store (de/en/he/fr/ar labels): a keyword too short for
the language identifier is read in the store's languages that have it as a label — one
("Zug", "Hahn": German) or several united ("Bank": the German and the English readings) — and
the answer says which language was assumed and why."""

from __future__ import annotations

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.model import Candidate, Mention
from kg_rag.pipeline.language import question_language, store_languages, united
from kg_rag.store import EmbeddedStore

C = "https://w3id.org/kg-rag/demo/concept/"


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    build_demo(g)
    return g


def test_the_store_languages_come_from_its_labels_once(kg: KnowledgeGraph) -> None:
    assert store_languages(kg.store) == ("ar", "de", "en", "fr", "he")
    assert kg.derived.contents().get("store-languages") == 1


@pytest.mark.parametrize(("text", "lang", "source", "langs"), [
    ("Zug", "de", "labels", ("de",)),
    ("Hahn", "de", "labels", ("de",)),
    ("Bank", "de", "labels", ("de", "en")),
    ("fruit trees", "en", "labels", ("en",)),        # French has 'fruit' only: covers less
    ("הגבר", "he", "script", ("he",)),
    ("The rooster crowed loudly at sunrise this morning", "en", "detected", ("en",)),
    ("qwzx", "en", "default", ("en",)),
])
def test_short_questions_take_the_languages_of_their_labels(
        kg: KnowledgeGraph, text: str, lang: str, source: str, langs: tuple[str, ...]) -> None:
    guess = kg.language(text)
    assert (guess.lang, guess.source, guess.langs) == (lang, source, langs)
    assert lang in guess.note()
    assert kg.language(text, "fr").source == "given"


def test_a_keyword_of_two_languages_gets_the_readings_of_both(kg: KnowledgeGraph) -> None:
    a = kg.ask("Bank", k=5)
    assert a.language is not None and a.language.langs == ("de", "en")
    [m] = a.mentions
    assert {C + "bench", C + "bank", C + "river-bank"} <= set(m.mention.concepts)
    assert {c.lang for c in m.mention.candidates} == {"de", "en"}
    assert {r.doc_id for r in a.results} & {"en-bank-account", "de-bank-konto"}


def test_a_german_keyword_is_found_without_its_language(kg: KnowledgeGraph) -> None:
    a = kg.ask("Hahn", k=3)
    assert a.lang == "de" and a.results and a.reason == ""
    assert {C + "rooster", C + "tap"} == set(a.mentions[0].mention.concepts)


def test_united_merges_one_span_and_keeps_the_others() -> None:
    def cand(concept: str, lang: str) -> Candidate:
        return Candidate(concept=C + concept, lemma="x", lang=lang)

    de = [Mention(0, 4, "Bank", "de", (cand("bench", "de"), cand("bank", "de")))]
    en = [Mention(0, 4, "Bank", "en", (cand("bank", "de"), cand("river-bank", "en"))),
          Mention(5, 9, "bank", "en", (cand("bank", "en"),))]
    out = united([de, en])
    assert [(m.start, m.end, m.lang) for m in out] == [(0, 4, "de"), (5, 9, "en")]
    assert [c.concept for c in out[0].candidates] == [C + "bench", C + "bank", C + "river-bank"]
    guess, mentions = question_language("Bank", None, EmbeddedStore(":memory:"), lambda t, lg: [])
    assert guess.source == "default" and mentions == []


# --- explain by the forms kg-rag prints; focus by the word itself ------------------------------

def test_explain_takes_the_bracketed_iri_and_the_short_ids_it_shows(kg: KnowledgeGraph) -> None:
    from kg_rag.errors import NotFoundError

    a = kg.ask("הגבר קרא בקול עם הזריחה", lang="he", k=2)
    iri = a.question_iri
    short = iri.rsplit("/", 1)[-1]
    assert short in kg.explain(iri).text()
    for form in (f"<{iri}>", short, f"question/{short}", f"  {short} "):
        assert kg.explain(form).root == iri
    decision = next(m.decision for m in a.mentions if m.decision)
    assert kg.resolve(decision.rsplit("/", 1)[-1]) == decision
    doc = a.results[0]
    assert kg.resolve(doc.doc_id) == doc.doc_iri
    why = kg.explain(short, document=doc.doc_id)
    assert why.summary and kg.explain(iri, document=f"<{doc.doc_iri}>").summary == why.summary
    assert kg.describe(f"<{C}rooster>").root == C + "rooster"
    with pytest.raises(NotFoundError, match="no IRI"):
        kg.explain("nothing-of-that-name")


@pytest.mark.parametrize(("question", "focus", "span"), [
    ("הגבר קרא בקול עם הזריחה", "הגבר", (0, 4)),
    ("הפירות העמיסו על הבדים", "בדים", (18, 22)),        # inside the word: after the prefix ה
    ("the bank by the river bank", "bank#2", (22, 26)),
    ("the bank by the river bank", "River  Bank", (16, 26)),
    ("she made up a story", "made up", (4, 11)),
])
def test_focus_by_word_or_phrase(question: str, focus: str, span: tuple[int, int]) -> None:
    from kg_rag.text.focus import focus_span

    assert focus_span(question, focus) == span


def test_a_focus_word_ranks_as_its_offsets_and_bad_ones_are_input_errors(kg: KnowledgeGraph) -> None:
    from kg_rag.errors import InputError

    q = "הגבר קרא בקול עם הזריחה"
    by_word = kg.ask(q, lang="he", k=3, focus="הגבר")
    by_offsets = kg.ask(q, lang="he", k=3, focus=(0, 4))
    assert [r.doc_id for r in by_word.results] == [r.doc_id for r in by_offsets.results]
    assert by_word.question_iri == by_offsets.question_iri
    for bad, message in (("zzz", "not in the question"), ("הגבר#2", "occurs 1 time"), ("  ", "empty")):
        with pytest.raises(InputError, match=message):
            kg.ask(q, lang="he", focus=bad)
