"""Annotation: find mentions of concept labels and dictionary written forms in text.

:class:`Annotator` is what the pipeline needs of an annotator; :class:`LexiconAnnotator` is the
one kg-rag has: ``LexiconAnnotator(store).annotate(text, lang)`` → :class:`~kg_rag.model.Mention`
list. ``Lexicon.from_store(store)`` is the in-memory index it uses (``store_lexicon(store)``: the
one kept in the store's registry, built once per catalog version).
"""

from __future__ import annotations

from typing import Protocol

from kg_rag.annotate.annotator import LexiconAnnotator
from kg_rag.annotate.lexicon import Lexicon, store_lexicon
from kg_rag.model import Mention


class Annotator(Protocol):
    """Finds the mentions of a text: spans with the candidate concepts (and senses) they may mean."""

    def annotate(self, text: str, lang: str) -> list[Mention]:
        """Every mention in ``text`` of language ``lang``, with offsets into ``nfc(text)``."""
        ...


__all__ = ["Annotator", "Lexicon", "LexiconAnnotator", "store_lexicon"]
