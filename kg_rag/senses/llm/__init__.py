"""The LLM sense selector (the paper's method): :mod:`.prompt` builds one prompt from the
dictionary senses, :mod:`.client` sends it to an OpenAI-compatible chat API, :mod:`.validate`
checks the JSON answer against the candidate ids, :mod:`.selector` ties them together.

Needs the ``llm`` extra (the ``openai`` client), imported when a request is first sent."""

from __future__ import annotations

from kg_rag.senses.llm.selector import LLMSenseSelector

__all__ = ["LLMSenseSelector"]
