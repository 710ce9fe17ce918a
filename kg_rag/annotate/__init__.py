"""Annotation: find mentions of concept labels and dictionary written forms in text.

``Annotator(store).annotate(text, lang)`` → :class:`~kg_rag.model.Mention` list;
``Lexicon.from_store(store)`` is the in-memory index it uses (build once, cache by ``version``).
"""

from __future__ import annotations

from kg_rag.annotate.annotator import Annotator
from kg_rag.annotate.lexicon import Lexicon

__all__ = ["Annotator", "Lexicon"]
