"""The knowledge-based sense selector (offline, the default): :mod:`.selector` combines a
sense-order prior (:mod:`.prior`) with context evidence — personalised PageRank over the concept
graph (:mod:`.graph`), gloss overlap (words from :func:`kg_rag.text.analyse.gloss_words`), verb frames (:mod:`.frames`), part of speech
from the tokens around a mention (:mod:`.pos_context`) and capitalisation (:mod:`.orthography`). Every
constant they use is a field of one frozen :class:`.config.KnowledgeSelectorConfig`, whose hash
is the agent version."""

from __future__ import annotations

from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig
from kg_rag.senses.knowledge.selector import KnowledgeSelector

__all__ = ["KnowledgeSelector", "KnowledgeSelectorConfig"]
