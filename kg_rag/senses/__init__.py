"""Sense selection: a :class:`SenseSelector` chooses among a mention's candidate senses.

- :mod:`.mode` — :class:`WsdMode`, the one list of modes; :mod:`.base` — the interface;
  :mod:`.factory` — the selector a mode names;
- :mod:`.knowledge` — the offline knowledge-based selector and its signals;
- :mod:`.llm` — the paper's method: a chat model prompted with the dictionary senses;
- :mod:`.fallback` — one selector standing in when another cannot work;
- :mod:`.selective` — ``knowledge+llm``: the LLM only for the knowledge selector's unsure decisions;
- :mod:`.store_default` — a store's default mode, set only on a measurement not below the first sense;
- :mod:`.baselines` — first sense and random, for evaluation.
"""

from __future__ import annotations

from kg_rag.senses.base import SenseSelector
from kg_rag.senses.factory import make_selector
from kg_rag.senses.mode import WsdMode

__all__ = ["SenseSelector", "WsdMode", "make_selector"]
