"""FallbackSelector (``--wsd llm,knowledge``): explicit, recorded, never silent."""

from __future__ import annotations

import pytest

from kg_rag.errors import ConfigError, SelectionError
from kg_rag.senses.baselines import FirstSenseSelector
from kg_rag.senses.factory import make_selector
from kg_rag.senses.fallback import FallbackSelector
from kg_rag.settings import Settings
from tests.support.llm_paper import RIGHT, paper_requests
from tests.support.llm_server import LlmServer, Reply, answer, choose, selector_for


def test_nothing_goes_to_the_fallback_when_the_llm_decides() -> None:
    with LlmServer(choose(RIGHT)) as srv:
        out = FallbackSelector(selector_for(srv), FirstSenseSelector()).select(paper_requests())
    assert [s.agent.name for s in out] == ["llm"] * 4
    assert not any(s.reason.startswith("fallback") for s in out)


def test_unresolved_mentions_go_to_the_fallback_with_the_reason() -> None:
    bad = answer(("M1", "S2"), ("M2", "S2"), ("M3", "S2"), ("M4", "S7"))  # S7 not an M4 id
    with LlmServer(bad) as srv:
        out = FallbackSelector(selector_for(srv), FirstSenseSelector()).select(paper_requests())
    assert [s.agent.name for s in out] == ["llm", "llm", "llm", "first-sense"]
    m4 = out[3]
    assert m4.chosen is not None and m4.chosen.concept.endswith("/man")   # first sense
    assert m4.reason.startswith("fallback: llm left it unresolved (LLM answer invalid:")
    assert '"S7" is not one of M4' in m4.reason and "decided by first-sense" in m4.reason
    assert m4.llm is not None and m4.llm.requests == 1     # the request it stands in for, counted


def test_selection_error_sends_every_mention_to_the_fallback() -> None:
    with LlmServer(Reply(status=503)) as srv:
        sel = FallbackSelector(selector_for(srv, llm_retries=0), FirstSenseSelector())
        out = sel.select(paper_requests())
    assert [s.agent.name for s in out] == ["first-sense"] * 4
    assert all("llm selector failed" in s.reason and "HTTP 503" in s.reason for s in out)


def test_fallback_errors_and_config_errors_are_not_hidden() -> None:
    class Broken:
        agent = FirstSenseSelector.agent

        def select(self, requests: object) -> list[object]:
            raise SelectionError("broken fallback")

    with LlmServer(Reply(status=503)) as srv:
        with pytest.raises(SelectionError, match="broken fallback"):
            FallbackSelector(selector_for(srv, llm_retries=0), Broken()).select(paper_requests())
    # a missing key is configuration, not a selection failure: no silent switch to knowledge
    with pytest.raises(ConfigError, match="KG_RAG_LLM_API_KEY"):
        make_selector("llm,knowledge", None, Settings(llm_api_key=None))  # type: ignore[arg-type]
