"""Build the sense selector named by ``--wsd`` / ``KG_RAG_WSD``.

``none`` (label matching, no selector), ``knowledge`` (offline default), ``llm``,
``llm,knowledge`` (LLM with an explicit fall-back), ``first-sense``, ``random``.
"""

from __future__ import annotations

from kg_rag.errors import ConfigError
from kg_rag.senses.base import SenseSelector
from kg_rag.settings import Settings
from kg_rag.store import Store

MODES = ("none", "knowledge", "llm", "llm,knowledge", "first-sense", "random")


def make_selector(mode: str, store: Store, config: Settings) -> SenseSelector | None:
    mode = mode.strip().lower().replace(" ", "")
    if mode == "none":
        return None
    if mode == "knowledge":
        from kg_rag.senses.knowledge.selector import KnowledgeSelector

        return KnowledgeSelector(store)
    if mode == "first-sense":
        from kg_rag.senses.baselines import FirstSenseSelector

        return FirstSenseSelector()
    if mode == "random":
        from kg_rag.senses.baselines import RandomSelector

        return RandomSelector(seed=0)
    if mode == "llm":
        from kg_rag.senses.llm.selector import LLMSenseSelector

        return LLMSenseSelector.from_settings(config)
    if mode == "llm,knowledge":
        from kg_rag.senses.fallback import FallbackSelector
        from kg_rag.senses.knowledge.selector import KnowledgeSelector
        from kg_rag.senses.llm.selector import LLMSenseSelector

        return FallbackSelector(LLMSenseSelector.from_settings(config), KnowledgeSelector(store))
    raise ConfigError(f"unknown sense selection mode {mode!r}; use one of {', '.join(MODES)}")
