"""Build the sense selector a :class:`~kg_rag.senses.mode.WsdMode` names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kg_rag.senses.mode import WsdMode

if TYPE_CHECKING:
    from kg_rag.senses.base import SenseSelector
    from kg_rag.settings import Settings
    from kg_rag.store import Store


def _knowledge(store: Store, config: Settings) -> SenseSelector:
    from kg_rag.senses.knowledge.selector import KnowledgeSelector

    return KnowledgeSelector(store, context_encoder=config.context_encoder)


def make_selector(mode: WsdMode, store: Store, config: Settings) -> SenseSelector | None:
    """The selector of ``mode`` (None for :attr:`WsdMode.NONE`: label matching)."""
    if mode == WsdMode.NONE:
        return None
    if mode == WsdMode.KNOWLEDGE:
        return _knowledge(store, config)
    if mode == WsdMode.FIRST_SENSE:
        from kg_rag.senses.baselines import FirstSenseSelector

        return FirstSenseSelector()
    if mode == WsdMode.RANDOM:
        from kg_rag.senses.baselines import RandomSelector

        return RandomSelector(seed=0)
    if mode == WsdMode.LLM:
        from kg_rag.senses.llm.selector import LLMSenseSelector

        return LLMSenseSelector.from_settings(config)
    if mode == WsdMode.LLM_KNOWLEDGE:
        from kg_rag.senses.fallback import FallbackSelector
        from kg_rag.senses.llm.selector import LLMSenseSelector

        return FallbackSelector(LLMSenseSelector.from_settings(config), _knowledge(store, config))
    if mode == WsdMode.KNOWLEDGE_LLM:
        from kg_rag.senses.llm.selector import LLMSenseSelector
        from kg_rag.senses.selective import SelectiveSelector

        return SelectiveSelector(_knowledge(store, config), LLMSenseSelector.from_settings(config),
                                 config.llm_threshold)
    raise TypeError(f"make_selector wants a WsdMode, not {mode!r} (parse text with WsdMode.parse)")
