"""English function words and the tokens around a mention (:func:`before`, :func:`after`, cut by
:func:`kg_rag.text.tokenise.english_tokens`), for the evidence the knowledge selector reads from
raw text without a tagger (:mod:`kg_rag.senses.knowledge.frames`, ``…pos_context``)."""

from __future__ import annotations

from kg_rag.text.tokenise import english_tokens

#: characters looked at on each side of a mention (far more than the few tokens used)
WINDOW = 200

ADVERBS = frozenset(
    "not n't never also only just still already even ever always often really then now currently "
    "usually soon again further rather quite very too all both".split())
PREPOSITIONS = frozenset(
    "in on at for from with into of by about over under through against among between across "
    "after before toward towards upon within without around like onto off up down out along "
    "behind beyond during since until via per near inside outside throughout".split())
DETERMINERS = frozenset("the a an this these those that my your his her its our their some any no "
                        "every each another such many much more most several few all both what "
                        "which whose".split())
OBJECT_PRONOUNS = frozenset(
    "him her them me us you it himself herself themselves myself ourselves itself yourself "
    "something anything nothing everything someone anyone everyone nobody people one".split())
QUOTES = frozenset(("``", "''", '"', "“", "”"))


def skippable(tok: str) -> bool:
    """An adverb or negation between a word and what it governs ("runs quickly", "did not")."""
    return tok in ADVERBS or tok.endswith("n't") or (tok.endswith("ly") and len(tok) > 4)


def before(context: str, start: int, n: int) -> list[str]:
    """The last ``n`` tokens before ``start``, lower-cased."""
    return [t.lower() for t in english_tokens(context[max(0, start - WINDOW) : start])][-n:]


def after(context: str, end: int, n: int) -> list[str]:
    """The first ``n`` tokens after ``end``, lower-cased."""
    return [t.lower() for t in english_tokens(context[end : end + WINDOW])][:n]
