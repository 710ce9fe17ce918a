"""Explanations from SPARQL alone: of a question, document, annotation or decision
(:mod:`.question`, one CONSTRUCT), and of why one document answered a question (:mod:`.result`)."""

from __future__ import annotations

from kg_rag.explain.question import Explanation, explain, render_text
from kg_rag.explain.result import explain_result

__all__ = ["Explanation", "explain", "explain_result", "render_text"]
