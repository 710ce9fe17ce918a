"""Case tells apart entries that differ only in case (China/china, March/march)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.derived import Derived
from kg_rag.model import Candidate, Mention, SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.senses.knowledge.orthography import case_mismatch, sentence, sentence_bounds
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.senses_fixture import load_fixture

MARCH = (Candidate("http://example.org/month", lemma="March", lang="en", rank=1),
         Candidate("http://example.org/walk", lemma="march", lang="en", rank=2))


def _mention(context: str, word: str, cands: tuple[Candidate, ...] = MARCH) -> Mention:
    start = context.index(word)
    return Mention(start, start + len(word), word, "en", cands)


def test_sentence_bounds() -> None:
    text = "One thing. Then the march began! Done."
    start = text.index("march")
    assert sentence(text, start, start + 5).strip() == "Then the march began!"
    assert sentence_bounds(text, 99, 100) == (0, len(text))  # offsets that do not fit: all of it


@pytest.mark.parametrize(("context", "word", "expected"), [
    ("they began the march at dawn", "march", [1.0, 0.0]),   # lower case: not the month
    ("it rained in March again", "March", [0.0, 1.0]),       # capitalised mid-sentence: the month
    ("Dawn came. March began at dawn", "March", [0.0, 0.0]),  # sentence-initial: case says nothing
    ("`` March on , '' he said", "March", [0.0, 0.0]),        # after an opening quote too
    ("THE MARCH", "MARCH", [0.0, 0.0]),                       # all capitals
])
def test_case_mismatch(context: str, word: str, expected: list[float]) -> None:
    assert case_mismatch(_mention(context, word), context, MARCH) == expected


def test_caseless_scripts_and_missing_lemmas_are_neutral() -> None:
    cands = (Candidate("http://example.org/a", lemma="בד", lang="he"), Candidate("http://example.org/b"))
    m = Mention(0, 2, "בד", "he", cands)
    assert case_mismatch(m, "בד", cands) == [0.0, 0.0]


@pytest.fixture
def store(mem_store: EmbeddedStore, tmp_path: Path) -> EmbeddedStore:
    Derived.of(mem_store, tmp_path / "cache")   # the knowledge base's disk cache, per test
    return load_fixture(mem_store)


def test_lower_case_mention_is_not_the_proper_noun(store: EmbeddedStore) -> None:
    context = "they began the march at dawn"
    req = SelectionRequest(_mention(context, "march"), context, "en", fetch_evidence(store, MARCH))
    [sel] = KnowledgeSelector(store).select([req])
    assert sel.chosen == MARCH[1]  # though the month is listed first
    context2 = "It rained in March again"
    req2 = SelectionRequest(_mention(context2, "March"), context2, "en", fetch_evidence(store, MARCH))
    [sel2] = KnowledgeSelector(store).select([req2])
    assert sel2.chosen == MARCH[0]
