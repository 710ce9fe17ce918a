"""Which questions the service writes to the store, and how many it keeps (issue 21).

Every question asked on an open port used to be written to the store, so anyone could grow it
without limit. Now the service records nothing unless ``KG_RAG_SERVICE_RECORD`` is on (never
with ``kg-rag serve --read-only``), and the explanation page never writes. When recording is on,
the store keeps a ring: after each recorded question the questions beyond the newest
``service_record_max``, older than ``service_record_ttl`` seconds, or beyond
``service_record_max_chars`` characters of question text in all are forgotten, together with the
decisions that no other graph uses — so the question graphs and their decisions stay bounded.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

from kg_rag.api import KnowledgeGraph
from kg_rag.settings import Settings

log = logging.getLogger(__name__)


class QuestionRing:
    def __init__(self, kg: KnowledgeGraph, config: Settings) -> None:
        self.kg = kg
        self.enabled = config.service_record and not config.read_only
        self.max = config.service_record_max
        self.ttl = config.service_record_ttl
        self.max_chars = config.service_record_max_chars

    def trim(self) -> int:
        """Forget the questions outside the ring and the decisions only they used; how many."""
        if not self.enabled:
            return 0
        with self.kg.write_lock:
            cutoff = datetime.now(timezone.utc) - timedelta(seconds=self.ttl)
            drop: list[str] = []
            chars = 0
            for i, q in enumerate(self.kg.questions()):        # newest first
                chars += len(q["text"])
                if i >= self.max or chars > self.max_chars or _time(q["time"]) < cutoff:
                    drop.append(q["iri"])
            if not drop:
                return 0
            n = self.kg.forget_questions(iris=drop, decisions=True)
            log.info("forgot %d recorded question(s) outside the ring", n)
            return n


def _time(text: str) -> datetime:
    t = datetime.fromisoformat(text)
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


__all__ = ["QuestionRing"]
