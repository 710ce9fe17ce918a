"""The language of a question — given, seen in its script, detected, or, for a text too short to
tell (a keyword or two: "Hahn", "Zug", "Bank"), read off the store's own labels.

A short text's language is ambiguous, and that is ambiguity like any other: every language of the
store (``sparql/select-store-languages.rq``, kept in the store's registry) in which its words are
labels or written forms is a candidate; of those, the ones whose labels cover the most of the text
are kept, and their readings are united — a mention found in two languages gets the candidates of
both, each :class:`~kg_rag.model.Candidate` carrying its language — so the sense selector, not a
guess, chooses between *Bank* the bench (de) and *bank* the river bank (en). The candidate the
language identifier likes best comes first and names the language the question is recorded in.

::

    guess, mentions = question_language("Zug", None, store, annotator.annotate)
    guess   # LanguageGuess(lang='de', source='labels', langs=('de',))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kg_rag.annotate.schemes import merge_groups
from kg_rag.derived import Derived, Slot
from kg_rag.errors import InputError
from kg_rag.model import LanguageGuess, Mention
from kg_rag.store import Store
from kg_rag.text.langid import (
    MIN_CONFIDENCE,
    MIN_LETTERS,
    SUPPORTED,
    check_language,
    language_scores,
    script_of,
)
from kg_rag.text.normalise import base_language

#: the language of a text nothing tells (the language identifier's old default)
DEFAULT = "en"
#: the supported base languages the store has labels in, in the store's registry
LANGUAGES: Slot[tuple[str, ...]] = Slot("store-languages")

Annotate = Callable[[str, str], Sequence[Mention]]


def store_languages(store: Store) -> tuple[str, ...]:
    """The supported languages (ISO 639-1) of the store's labels and written forms, sorted;
    queried once per catalog version."""
    def build() -> tuple[str, ...]:
        found: set[str] = set()
        for row in store.select("select-store-languages"):
            try:
                found.add(check_language(base_language(row["lang"].value)))
            except InputError:  # a language kg-rag does not support is no candidate
                continue
        return tuple(sorted(found))

    return Derived.of(store).value(LANGUAGES, build)


def question_language(text: str, lang: str | None, store: Store,
                      annotate: Annotate) -> tuple[LanguageGuess, list[Mention]]:
    """How the language of the NFC ``text`` is decided (``lang``: a code, or None/"auto"), and
    the mentions of ``text`` in it (in all of them, united, for a short text of several)."""
    if lang and lang != "auto":
        code = check_language(lang)
        return LanguageGuess(code, "given", (code,)), list(annotate(text, code))
    script, letters = script_of(text)
    if script is not None:
        return LanguageGuess(script, "script", (script,)), list(annotate(text, script))
    scores = language_scores(text) if letters else {}
    best = max(scores, key=lambda k: scores[k]) if scores else DEFAULT
    if letters >= MIN_LETTERS and scores.get(best, 0.0) >= MIN_CONFIDENCE:
        return LanguageGuess(best, "detected", (best,)), list(annotate(text, best))
    # too short or unclear: the languages the store has the text's words as labels in
    found: dict[str, tuple[list[Mention], int]] = {}
    for cand in store_languages(store):
        mentions = list(annotate(text, cand))
        own = [m for m in mentions if any(c.lang == cand for c in m.candidates)]
        if own:
            found[cand] = (mentions, _covered(own))
    if not found:
        return LanguageGuess(DEFAULT, "default", (DEFAULT,)), list(annotate(text, DEFAULT))
    most = max(n for _, n in found.values())
    langs = sorted((k for k, (_, n) in found.items() if n == most),
                   key=lambda k: (-scores.get(k, 0.0), SUPPORTED.index(k)))
    return (LanguageGuess(langs[0], "labels", tuple(langs)),
            united([found[k][0] for k in langs]))


def _covered(mentions: Sequence[Mention]) -> int:
    """How many characters of the text the mentions cover."""
    chars: set[int] = set()
    for m in mentions:
        chars.update(range(m.start, m.end))
    return len(chars)


def united(per_language: Sequence[Sequence[Mention]]) -> list[Mention]:
    """One mention list from the mentions of one text in several languages (the first language
    first): a span found in several gets the candidates of all (the first language's first, a
    candidate found twice once); sorted by start, longest first, as the annotator sorts."""
    spans: dict[tuple[int, int], Mention] = {}
    for mentions in per_language:
        for m in mentions:
            old = spans.get((m.start, m.end))
            if old is None:
                spans[(m.start, m.end)] = m
                continue
            ids = {c.id for c in old.candidates}
            extra = tuple(c for c in m.candidates if c.id not in ids)
            if extra:
                spans[(m.start, m.end)] = replace(old, candidates=old.candidates + extra,
                                                  fixed_phrase=old.fixed_phrase or m.fixed_phrase,
                                                  same_meaning=merge_groups(old.same_meaning,
                                                                            m.same_meaning))
    return sorted(spans.values(), key=lambda m: (m.start, -(m.end - m.start)))


__all__ = ["LANGUAGES", "question_language", "store_languages", "united"]
