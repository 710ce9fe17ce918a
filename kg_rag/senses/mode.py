""":class:`WsdMode`: how the ambiguous words of a text are decided (``--wsd`` / ``KG_RAG_WSD``).

The one list of modes. Text from outside (a command line, a request, an environment variable)
becomes a mode with :meth:`WsdMode.parse` at the edge; everything inside takes a ``WsdMode``.
"""

from __future__ import annotations

from enum import StrEnum

from kg_rag.errors import InputError


class WsdMode(StrEnum):
    """A sense selection mode; its value is the name users type."""

    NONE = "none"                    # label matching: no selector, every candidate concept counts
    KNOWLEDGE = "knowledge"          # the offline knowledge-based selector (default)
    LLM = "llm"                      # a chat model prompted with the dictionary senses
    LLM_KNOWLEDGE = "llm,knowledge"  # the LLM, with the knowledge selector as its fall-back
    KNOWLEDGE_LLM = "knowledge+llm"  # the knowledge selector; the LLM only for its unsure decisions
    FIRST_SENSE = "first-sense"      # baseline: the dictionary's first sense
    RANDOM = "random"                # baseline: a seeded random sense

    @classmethod
    def parse(cls, value: object) -> WsdMode:
        """The mode named by ``value`` (case and spaces do not matter; ``knowledge llm`` is
        ``knowledge+llm``); InputError naming the allowed values for anything else."""
        if isinstance(value, WsdMode):
            return value
        if isinstance(value, str):
            # "knowledge llm" too: a "+" in a URL's query string arrives as a space
            names = ("".join(value.split()).lower(), "+".join(value.split()).lower())
            for mode in cls:
                if mode.value in names:
                    return mode
        raise InputError(f"unknown sense selection mode {value!r}; use one of {cls.names()}")

    @property
    def uses_llm(self) -> bool:
        """Whether this mode may send requests to a chat model."""
        return self in (WsdMode.LLM, WsdMode.LLM_KNOWLEDGE, WsdMode.KNOWLEDGE_LLM)

    @classmethod
    def names(cls) -> str:
        """The allowed values, comma-separated, for messages and help texts."""
        return ", ".join(m.value for m in cls)


__all__ = ["WsdMode"]
