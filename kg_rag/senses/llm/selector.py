"""The paper's method: an LLM chooses among dictionary senses, through any OpenAI-compatible API.

``select()`` sends one chat request with the ambiguous mentions of the call (``M1``, ``M2`` …,
each with its sense ids ``S1``, ``S2`` …, see :mod:`.llm_prompt`) — several requests, in text
order, when they are more than ``MAX_MENTIONS`` or their data more than ``MAX_DATA_TOKENS`` (a
long document would otherwise ask for more output than a model gives) — validates the JSON answer
against the ids of each mention (:mod:`.llm_validate`) and asks once more, with only the
mentions whose answers were invalid and what was wrong with them. A mention still invalid comes
back unresolved with the reason; an invalid answer never yields a chosen sense.

Each :class:`~kg_rag.model.LlmTrace` describes the request that gave the mention its final
answer: that request's ``prompt_sha256`` and the token counts the API reported for the whole
request (mentions of one request share them; count a call once per prompt hash). When every
mention of the first request had to be asked again, the first request's tokens and latency are
added to the retry's, so that summing over distinct prompt hashes still gives the true total.
:attr:`LLMSenseSelector.usage` counts requests and tokens over the selector's life.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kg_rag.errors import ConfigError, SelectionError
from kg_rag.model import Agent, LlmTrace, Selection, SelectionRequest
from kg_rag.senses.base import LLM_INVALID
from kg_rag.senses.llm.client import ChatClient, ChatResult, endpoint_host
from kg_rag.senses.llm.prompt import (
    TEMPLATE,
    MentionSlot,
    Prompt,
    build_prompt,
    build_slots,
    candidate_ids,
    check_template,
)
from kg_rag.senses.llm.validate import Verdict, validate
from kg_rag.settings import Settings, header_safe

log = logging.getLogger(__name__)

#: mentions per chat request, and the estimated tokens of their data blocks
MAX_MENTIONS = 16
MAX_DATA_TOKENS = 6000

NO_KEY_HELP = (
    "no API key for the LLM sense selector: set KG_RAG_LLM_API_KEY (or OPENAI_API_KEY), and for "
    "a provider other than OpenAI also KG_RAG_LLM_BASE_URL and KG_RAG_LLM_MODEL; a local "
    "server (Ollama, llama.cpp, vLLM, LM Studio) needs any non-empty key, e.g. "
    "KG_RAG_LLM_BASE_URL=http://127.0.0.1:11434/v1 KG_RAG_LLM_API_KEY=local"
)


@dataclass(frozen=True, slots=True)
class Usage:
    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass(frozen=True, slots=True)
class _Cost:
    """The request that answered a mention (plus an earlier one no other mention accounts for)."""

    sha256: str
    tokens_in: int
    tokens_out: int
    latency_ms: float
    requests: int = 1


class LLMSenseSelector:
    """:class:`~kg_rag.senses.base.SenseSelector` asking a chat model (template ``wsd-v1``, or
    ``wsd-rich-v1``: :mod:`.rich`); the template is the agent's version."""

    def __init__(self, client: ChatClient, *, deadline: float, template: str = TEMPLATE) -> None:
        self.client = client
        self.deadline = float(deadline)
        self.template = check_template(template)
        self.agent = Agent(name="llm", version=self.template, model=client.model,
                           endpoint_host=client.host)
        self._usage = Usage()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMSenseSelector:
        template = check_template(settings.llm_prompt)
        key = (settings.llm_api_key or "").strip()
        if not key:
            raise ConfigError(NO_KEY_HELP)
        if not header_safe(key):   # it goes into an HTTP header (also when the settings were
            # built in Python, past the environment's check)
            raise ConfigError("the LLM API key is not valid header text: printable ASCII with "
                              "no spaces")
        if not settings.llm_model:
            raise ConfigError("no LLM model: set KG_RAG_LLM_MODEL (e.g. gpt-4o-mini, llama3.1)")
        client = ChatClient(base_url=settings.llm_base_url, api_key=key,
                            model=settings.llm_model, timeout=settings.llm_timeout,
                            retries=settings.llm_retries, concurrency=settings.llm_concurrency,
                            max_response_bytes=settings.llm_max_response_bytes)
        return cls(client, deadline=settings.llm_deadline, template=template)

    @property
    def usage(self) -> Usage:
        return self._usage

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        out: list[Selection | None] = [None] * len(requests)
        todo: list[int] = []
        for i, req in enumerate(requests):
            ids = candidate_ids(req)
            if not ids:
                out[i] = Selection((), None, 0.0, self.agent, reason="no candidates")
            elif len(ids) == 1:
                out[i] = Selection(((ids[0], 1.0),), req.mention.candidates[0], 1.0, self.agent,
                                   reason="only one candidate")
            else:
                todo.append(i)
        for chunk in _chunks(requests, todo, self.template):  # each request (and retry) has the deadline
            self._decide(requests, build_slots(requests, chunk, self.template),
                         time.monotonic() + self.deadline, out)
        return [s for s in out if s is not None]

    def _ask(self, prompt: Prompt, deadline: float) -> ChatResult:
        max_tokens = 120 + 90 * len(prompt.slots)
        result = self.client.complete(list(prompt.messages), prompt.response_format,
                                      max_tokens, deadline)
        with self._lock:
            u = self._usage
            self._usage = Usage(u.requests + 1, u.tokens_in + result.tokens_in,
                                u.tokens_out + result.tokens_out)
        log.debug("LLM %s answered %d mentions: %d+%d tokens, %.0f ms", self.client.host,
                  len(prompt.slots), result.tokens_in, result.tokens_out, result.latency_ms)
        return result

    def _decide(self, requests: Sequence[SelectionRequest], slots: list[MentionSlot],
                deadline: float, out: list[Selection | None]) -> None:
        prompt = build_prompt(requests, slots, template=self.template)
        first = self._ask(prompt, deadline)  # SelectionError here: nothing could be decided
        verdicts = _verdicts(first, slots)
        cost1 = _Cost(prompt.sha256, first.tokens_in, first.tokens_out, first.latency_ms)
        costs = {s.mid: cost1 for s in slots}
        failed = [s for s in slots if not verdicts[s.mid].valid]
        if failed:
            problems = {s.mid: verdicts[s.mid].problem for s in failed}
            log.info("LLM answer invalid for %s; asking once more",
                     ", ".join(f"{m} ({p})" for m, p in problems.items()))
            retry = build_prompt(requests, failed, problems, template=self.template)
            try:
                second = self._ask(retry, deadline)
            except SelectionError as e:  # the valid answers stand; the failed ones say why
                for s in failed:
                    verdicts[s.mid] = Verdict(None, problem=f"{problems[s.mid]}; the retry "
                                                            f"failed: {e}")
            else:
                alone = len(failed) == len(slots)  # nobody else carries the first request
                cost2 = _Cost(retry.sha256,
                              second.tokens_in + (first.tokens_in if alone else 0),
                              second.tokens_out + (first.tokens_out if alone else 0),
                              second.latency_ms + first.latency_ms, 2 if alone else 1)
                again = _verdicts(second, failed)
                for s in failed:
                    costs[s.mid] = cost2
                    v = again[s.mid]
                    verdicts[s.mid] = v if v.valid else replace(
                        v, problem=f"invalid answer twice: {problems[s.mid]}; then {v.problem}")
        for s in slots:
            out[s.index] = self._selection(requests[s.index], s, verdicts[s.mid], costs[s.mid])

    def _selection(self, req: SelectionRequest, slot: MentionSlot, v: Verdict,
                   cost: _Cost) -> Selection:
        trace = LlmTrace(template=self.template, prompt_sha256=cost.sha256, tokens_in=cost.tokens_in,
                         tokens_out=cost.tokens_out, latency_ms=round(cost.latency_ms, 1),
                         rationale=v.rationale, requests=cost.requests)
        ids = slot.ids
        if v.sense is None:
            scores = tuple((cid, 0.0) for _, cid in ids)
            return Selection(scores, None, 0.0, self.agent,
                             reason=f"{LLM_INVALID}: {v.problem}", llm=trace)
        chosen_id = slot.candidate_id(v.sense)
        rest = (1.0 - v.confidence) / (len(ids) - 1)
        scores = tuple((cid, v.confidence if cid == chosen_id else rest) for _, cid in ids)
        chosen = next(c for c in req.mention.candidates if c.id == chosen_id)
        return Selection(scores, chosen, v.confidence, self.agent, llm=trace)


def _verdicts(result: ChatResult, slots: list[MentionSlot]) -> dict[str, Verdict]:
    """The validated answer of each mention; all invalid, with the same reason, when the
    server's body was no chat completion at all (HTML, not JSON, too large …)."""
    if result.problem:
        return {s.mid: Verdict(None, problem=result.problem) for s in slots}
    return validate(result.content, result.finish_reason, slots)


def _chunks(requests: Sequence[SelectionRequest], todo: list[int],
            template: str = TEMPLATE) -> list[list[int]]:
    """``todo`` split, in order, into requests of at most ``MAX_MENTIONS`` mentions and
    ``MAX_DATA_TOKENS`` estimated tokens of data (a bigger mention goes alone)."""
    if not todo:
        return []
    sizes = {s.index: s.tokens for s in build_slots(requests, todo, template)}
    out: list[list[int]] = [[]]
    used = 0
    for i in todo:
        if out[-1] and (len(out[-1]) >= MAX_MENTIONS or used + sizes[i] > MAX_DATA_TOKENS):
            out.append([])
            used = 0
        out[-1].append(i)
        used += sizes[i]
    return out


__all__ = ["LLMSenseSelector", "NO_KEY_HELP", "Usage", "endpoint_host"]
