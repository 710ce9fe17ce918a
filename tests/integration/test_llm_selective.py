"""SelectiveSelector (``--wsd knowledge+llm``) with the real ``openai`` client against the loopback
server: only the knowledge decisions below the threshold are sent; when the model answers
wrong, slowly, invalidly or with errors, the knowledge decision stands and says why."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kg_rag.errors import ConfigError
from kg_rag.model import Agent, Selection, SelectionRequest
from kg_rag.senses.factory import make_selector
from kg_rag.senses.mode import WsdMode
from kg_rag.senses.selective import DEFAULT_THRESHOLD, SelectiveSelector, probability
from kg_rag.settings import Settings, load_settings
from tests.support.llm_paper import RIGHT, paper_requests
from tests.support.llm_server import (
    KEY,
    LlmServer,
    Reply,
    answer,
    choose,
    mention_blocks,
    selector_for,
)

#: the knowledge probabilities the stub gives the paper's four words (בד, בר, מיתג, גבר)
PROBS = (0.95, 0.5, 0.7, 0.99)


class StubKnowledge:
    """Chooses each word's first candidate with the probability of :data:`PROBS`."""

    agent = Agent(name="knowledge", version="stub")

    def __init__(self, probs: Sequence[float] = PROBS) -> None:
        self.probs = probs

    def select(self, requests: Sequence[SelectionRequest]) -> list[Selection]:
        out = []
        for req, p in zip(requests, self.probs, strict=True):
            cands = req.mention.candidates
            rest = (1 - p) / (len(cands) - 1)
            out.append(Selection(tuple((c.id, p if i == 0 else rest) for i, c in enumerate(cands)),
                                 cands[0], 2 * p - 1, self.agent, reason="stub"))
        return out


def surfaces(srv: LlmServer) -> list[list[str]]:
    """The words each request asked about, in order."""
    return [[surface for surface, _ in mention_blocks(r.user).values()] for r in srv.chat_requests]


def test_only_the_decisions_below_the_threshold_are_sent() -> None:
    reqs = paper_requests()
    with LlmServer(choose(RIGHT)) as srv:
        sel = SelectiveSelector(StubKnowledge(), selector_for(srv), 0.8)
        out = sel.select(reqs)
        assert surfaces(srv) == [[reqs[1].mention.text, reqs[2].mention.text]]   # one request
    assert [s.agent.name for s in out] == ["knowledge", "llm", "llm", "knowledge"]
    assert "probability 0.950 ≥ 0.8: the LLM was not asked" in out[0].reason
    assert out[1].reason.startswith("knowledge probability 0.500 < 0.8 (it chose ")
    assert "decided by llm" in out[1].reason and out[1].llm is not None
    # the LLM's choice stands (RIGHT picks the paper's reading, not the stub's first candidate)
    assert out[1].chosen is not None and out[1].chosen.concept.endswith("/wilderness")
    assert sel.agent.name == "knowledge+llm" and sel.agent.model == "test-model"
    assert sel.agent.version.endswith("@0.8")


def test_nothing_is_sent_when_every_decision_is_confident() -> None:
    with LlmServer(choose(RIGHT)) as srv:
        out = SelectiveSelector(StubKnowledge(), selector_for(srv), 0.4).select(paper_requests())
        assert srv.chat_requests == []
    assert all(s.agent.name == "knowledge" and s.llm is None for s in out)
    # threshold 0: never ask; threshold 1: ask for everything that is not certain
    with LlmServer(choose(RIGHT)) as srv:
        SelectiveSelector(StubKnowledge(), selector_for(srv), 0.0).select(paper_requests())
        assert srv.chat_requests == []
        SelectiveSelector(StubKnowledge(), selector_for(srv), 1.0).select(paper_requests())
        assert len(surfaces(srv)[0]) == 4


@pytest.mark.parametrize("script, retries, why", [
    (Reply(status=503), 0, "the llm selector failed (the LLM at 127.0.0.1 failed 1 times (HTTP 503)"),
    (Reply(status=500, delay=0.0), 1, "HTTP 500"),
    (Reply(delay=3.0), 0, "the llm selector failed"),                       # slower than the deadline
    (Reply(status=401), 0, "rejected the API key"),
])
def test_when_the_llm_fails_the_knowledge_decision_stands(script: Reply, retries: int, why: str) -> None:
    with LlmServer(script) as srv:
        llm = selector_for(srv, llm_retries=retries, llm_timeout=1.0, llm_deadline=1.5)
        out = SelectiveSelector(StubKnowledge(), llm, 0.8).select(paper_requests())
    assert [s.agent.name for s in out] == ["knowledge"] * 4
    assert all(s.chosen is not None for s in out)
    for s in (out[1], out[2]):
        assert "probability" in s.reason and "< 0.8" in s.reason and why in s.reason
        assert s.reason.endswith("the knowledge decision stands")


def test_an_invalid_answer_keeps_the_knowledge_decision_and_its_cost() -> None:
    bad = answer(("M1", "S9"), ("M2", "S1"))   # M1 (בר) gets an id it does not have, twice
    with LlmServer(bad) as srv:
        out = SelectiveSelector(StubKnowledge(), selector_for(srv), 0.8).select(paper_requests())
        assert len(srv.chat_requests) == 2                       # the request and its one retry
    bar, mitag = out[1], out[2]
    assert bar.agent.name == "knowledge" and bar.chosen is not None
    assert "the llm answer was unusable (LLM answer invalid: " in bar.reason
    assert bar.reason.endswith("the knowledge decision stands")
    assert bar.llm is not None and bar.llm.tokens_in > 0          # the call is still counted
    assert mitag.agent.name == "llm"


def test_a_wrong_answer_is_the_llms_decision_recorded_as_such() -> None:
    # the model answers S1 everywhere: for בר that is the pub, the knowledge stub's choice too
    with LlmServer(choose({})) as srv:
        out = SelectiveSelector(StubKnowledge(), selector_for(srv), 0.8).select(paper_requests())
    assert out[1].agent.name == "llm" and out[1].chosen == paper_requests()[1].mention.candidates[0]


def test_probability_is_the_chosen_share_of_the_scores() -> None:
    reqs = paper_requests()
    k = StubKnowledge().select(reqs)
    assert [round(probability(s) or 0, 6) for s in k] == list(PROBS)
    assert probability(Selection((), None, 0.0, StubKnowledge.agent)) is None


def test_the_threshold_setting() -> None:
    assert Settings().llm_threshold == DEFAULT_THRESHOLD
    assert load_settings({"KG_RAG_LLM_THRESHOLD": "0"}).llm_threshold == 0.0
    assert load_settings({"KG_RAG_LLM_THRESHOLD": "0.65"}).llm_threshold == 0.65
    for bad in ("1.5", "-0.1", "high"):
        with pytest.raises(ConfigError, match="KG_RAG_LLM_THRESHOLD"):
            load_settings({"KG_RAG_LLM_THRESHOLD": bad})
    with pytest.raises(ConfigError, match="from 0 to 1"):
        SelectiveSelector(StubKnowledge(), StubKnowledge(), 2.0)
    # no key is a configuration error, never a silent knowledge-only run
    with pytest.raises(ConfigError, match="KG_RAG_LLM_API_KEY"):
        make_selector(WsdMode.KNOWLEDGE_LLM, None, Settings(llm_api_key=None))  # type: ignore[arg-type]
    sel = make_selector(WsdMode.KNOWLEDGE_LLM, None,  # type: ignore[arg-type]
                        Settings(llm_api_key=KEY, llm_threshold=0.3))
    assert isinstance(sel, SelectiveSelector) and sel.threshold == 0.3
