"""Build the sense selector named by ``--wsd`` / ``KG_RAG_WSD``.

``none`` (label matching, no selector), ``knowledge`` (offline default), ``llm``,
``llm,knowledge`` (LLM with an explicit fall-back), ``first-sense``, ``random``.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..settings import Settings
from ..store import Store
from .base import SenseSelector

MODES = ("none", "knowledge", "llm", "llm,knowledge", "first-sense", "random")


def make_selector(mode: str, store: Store, config: Settings) -> SenseSelector | None:
    mode = mode.strip().lower().replace(" ", "")
    if mode == "none":
        return None
    if mode == "knowledge":
        from .knowledge import KnowledgeSelector

        return KnowledgeSelector(store)
    if mode == "first-sense":
        from .baselines import FirstSenseSelector

        return FirstSenseSelector()
    if mode == "random":
        from .baselines import RandomSelector

        return RandomSelector(seed=0)
    if mode == "llm":
        from .llm import LLMSenseSelector

        return LLMSenseSelector.from_settings(config)
    if mode == "llm,knowledge":
        from .fallback import FallbackSelector
        from .knowledge import KnowledgeSelector
        from .llm import LLMSenseSelector

        return FallbackSelector(LLMSenseSelector.from_settings(config), KnowledgeSelector(store))
    raise ConfigError(f"unknown sense selection mode {mode!r}; use one of {', '.join(MODES)}")
