"""A hostile or broken OpenAI-compatible server cannot hang, flood or crash the LLM selector.

Issues 21/22: a hanging model held ``ask --wsd llm`` for ~91 s; a body sent one byte every 2 s
ran past 300 s under a 20 s deadline; a 50 MB body was accepted; an HTML ``200`` ended in a
traceback. Here each is scripted on the loopback server (the real ``openai`` client talks to
it) with small deadlines, so every test takes a few seconds at most.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import SelectionError
from kg_rag.resources import resource_path
from kg_rag.senses.baselines import FirstSenseSelector
from kg_rag.senses.fallback import FallbackSelector
from kg_rag.settings import Settings, load_settings
from kg_rag.store import open_store
from tests.support.llm_paper import RIGHT, paper_requests
from tests.support.llm_server import KEY, LlmServer, Reply, choose, llm_env, selector_for

CLI = "import sys; from kg_rag.cli import main; sys.exit(main(sys.argv[1:]))"
BAD_Q = "הפירות העמיסו על הבדים"
HTML = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>oops</body></html>"


def test_defaults_bound_a_request_well_under_a_client_timeout() -> None:
    s = load_settings({})
    assert s.llm_deadline == 20.0 and s.llm_max_response_bytes == 1_000_000
    s = load_settings({"KG_RAG_LLM_DEADLINE": "2.5", "KG_RAG_LLM_MAX_RESPONSE_BYTES": "5000"})
    assert s.llm_deadline == 2.5 and s.llm_max_response_bytes == 5000


@pytest.mark.parametrize("slow", [
    Reply(delay=30.0),                               # headers never come
    Reply(header_trickle=0.1),                       # headers one byte every 0.1 s (~10 s)
    Reply(trickle=0.1, content='{"answers": []}'),   # the body one byte every 0.1 s (~25 s)
    Reply(trickle=0.1, chunked=True),                # the same, chunked
], ids=["slow-headers", "header-trickle", "body-trickle", "chunked-trickle"])
def test_the_deadline_is_total_however_slowly_the_answer_comes(slow: Reply) -> None:
    with LlmServer(slow) as srv:
        sel = selector_for(srv, llm_timeout=5.0, llm_retries=3, llm_deadline=1.0)
        t0 = time.monotonic()
        with pytest.raises(SelectionError, match="deadline") as err:
            sel.select(paper_requests())
        took = time.monotonic() - t0
    assert took < 1.6, took
    assert len(str(err.value).splitlines()) == 1 and "KG_RAG_LLM_DEADLINE" in str(err.value)


def test_after_a_slow_body_the_fallback_decision_stands() -> None:
    with LlmServer(Reply(trickle=0.1)) as srv:
        sel = FallbackSelector(selector_for(srv, llm_timeout=5.0, llm_deadline=1.0),
                               FirstSenseSelector())
        t0 = time.monotonic()
        out = sel.select(paper_requests())
        took = time.monotonic() - t0
    assert took < 1.6, took
    assert [s.agent.name for s in out] == ["first-sense"] * 4
    assert all("llm selector failed" in s.reason and "deadline" in s.reason for s in out)


def test_the_selector_is_usable_after_a_deadline() -> None:
    with LlmServer([Reply(trickle=0.1), choose(RIGHT)]) as srv:
        sel = selector_for(srv, llm_timeout=5.0, llm_retries=0, llm_deadline=1.0)
        with pytest.raises(SelectionError):
            sel.select(paper_requests())
        out = sel.select(paper_requests())
    assert out[0].chosen is not None and out[0].chosen.concept.endswith("/branch")


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_huge_answer_is_refused_at_the_cap(chunked: bool) -> None:
    pad = 20_000_000
    with LlmServer(Reply(pad=pad, chunked=chunked)) as srv:
        sel = selector_for(srv, llm_max_response_bytes=100_000, llm_deadline=10.0)
        t0 = time.monotonic()
        out = sel.select(paper_requests())
        took = time.monotonic() - t0
    assert took < 5, took
    assert all(s.chosen is None for s in out)
    assert all("larger than 100000 bytes" in s.reason for s in out), out[0].reason
    assert srv.bytes_sent < len(srv.chat_requests) * pad / 2   # the client stopped reading


def test_a_compressed_answer_is_refused_before_it_expands() -> None:
    with LlmServer(Reply(pad=50_000_000, gzip=True)) as srv:    # ~50 KB on the wire
        out = selector_for(srv, llm_max_response_bytes=100_000).select(paper_requests())
    assert all(s.chosen is None and "compressed (gzip)" in s.reason for s in out), out[0].reason
    assert srv.chat_requests[0].headers.get("accept-encoding") == "identity"


def test_an_announced_length_over_the_cap_is_refused_unread() -> None:
    with LlmServer(Reply(pad=200_000)) as srv:
        out = selector_for(srv, llm_max_response_bytes=100_000).select(paper_requests())
    assert all("larger than 100000 bytes" in s.reason for s in out)


def test_an_answer_just_under_the_cap_is_read() -> None:
    with LlmServer(choose(RIGHT)) as srv:
        out = selector_for(srv, llm_max_response_bytes=5_000).select(paper_requests())
    assert all(s.chosen is not None for s in out)


MALFORMED = [
    (Reply(raw=HTML, content_type="text/html"), 'not JSON (text/html, starts "<!DOCTYPE'),
    (Reply(raw=HTML), 'not JSON (application/json, starts "<!DOCTYPE'),
    (Reply(raw="\x00\xff garbage"), "not JSON"),
    (Reply(raw=""), "not JSON"),
    (Reply(raw="[" * 200_000), "not JSON"),
    (Reply(raw="[1, 2]"), "a JSON list, not a chat completion"),
    (Reply(raw='"just text"'), "a JSON str, not a chat completion"),
    (Reply(raw='{"id": "x", "object": "chat.completion"}'), "has no choices"),
    (Reply(raw='{"choices": []}'), "has no choices"),
    (Reply(raw='{"choices": 5}'), "has no choices"),
    (Reply(raw='{"choices": ["a"]}'), "no message in its first choice"),
    (Reply(raw='{"choices": [{"message": "hi"}]}'), "no message in its first choice"),
    (Reply(raw='{"choices": [{"message": {"content": 5}}]}'), "content that is not text"),
    (Reply(raw='{"choices": [{"message": {"content": null}}], "usage": "lots"}'), "empty answer"),
    (Reply(raw='{"choices": [{"message": {"content": "<html>no</html>"}}]}'), "not valid JSON"),
]


@pytest.mark.parametrize("reply, why", MALFORMED)
def test_a_malformed_200_leaves_every_mention_unresolved_with_the_reason(reply: Reply,
                                                                         why: str) -> None:
    with LlmServer(reply) as srv:
        out = selector_for(srv).select(paper_requests())
        assert len(srv.chat_requests) == 2          # asked once more, like any invalid answer
    assert len(out) == 4 and all(s.chosen is None for s in out)
    for s in out:
        assert s.reason.startswith("LLM answer invalid: ") and why in s.reason, s.reason
        assert "\n" not in s.reason and "Traceback" not in s.reason


def test_a_malformed_answer_then_a_good_one_decides() -> None:
    with LlmServer([Reply(raw=HTML, content_type="text/html"), choose(RIGHT)]) as srv:
        out = selector_for(srv).select(paper_requests())
    assert all(s.chosen is not None for s in out)


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    demo = resource_path("demo")
    path = tmp_path_factory.mktemp("llm-hostile") / "store"
    with KnowledgeGraph(open_store(str(path)), Settings(store=str(path))) as kg:
        kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    return path


def _cli(store: Path, srv: LlmServer, *args: str, **env_extra: str
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KG_RAG_", "OPENAI_"))} | llm_env(srv, **env_extra)
    proc = subprocess.run([sys.executable, "-c", CLI, "--store", str(store), *args],
                          env=env, capture_output=True, text=True, timeout=60)
    assert KEY not in proc.stdout and KEY not in proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_cli_ask_with_an_html_200_answers_with_the_word_unresolved(demo_store: Path) -> None:
    import json

    with LlmServer(Reply(raw=HTML, content_type="text/html")) as srv:
        proc = _cli(demo_store, srv, "ask", BAD_Q, "--lang", "he", "--wsd", "llm", "--json")
    assert proc.returncode == 0, proc.stderr
    m = next(m for m in json.loads(proc.stdout)["mentions"] if m["ambiguous"])
    assert m["chosen"] is None and "not JSON (text/html" in m["reason"], m


def test_cli_ask_against_a_trickling_model_stops_at_the_deadline(demo_store: Path) -> None:
    with LlmServer(Reply(trickle=0.2)) as srv:
        t0 = time.monotonic()
        proc = _cli(demo_store, srv, "ask", "הגבר קרא בקול עם הזריחה", "--lang", "he",
                    "--wsd", "llm", KG_RAG_LLM_DEADLINE="1.5", KG_RAG_LLM_TIMEOUT="5")
        took = time.monotonic() - t0
    assert proc.returncode == 6, (proc.returncode, proc.stderr)
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "within the deadline" in lines[0], proc.stderr
    assert took < 15, took   # the interpreter's start and imports included


def test_service_ask_with_an_html_200_or_a_trickle_answers_cleanly_and_in_time() -> None:
    """The service used to answer 500 to an HTML 200 of the model; a trickle held it."""
    import httpx

    from kg_rag.cli.demo import build_demo
    from kg_rag.service import create_app
    from kg_rag.store import EmbeddedStore
    from tests.support.service_server import serve

    store = EmbeddedStore(":memory:")
    build_demo(KnowledgeGraph(store))
    ask = {"question": BAD_Q, "language": "he", "wsd": "llm"}
    with LlmServer([Reply(raw=HTML, content_type="text/html"), Reply(raw=HTML,
                    content_type="text/html"), Reply(trickle=0.2)]) as llm:
        cfg = Settings(llm_base_url=llm.url, llm_api_key=KEY, llm_model="test-model",
                       llm_timeout=5.0, llm_deadline=1.0)
        with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url, \
                httpx.Client(base_url=url, timeout=30) as client:
            r = client.post("/ask", json=ask)
            assert r.status_code == 200, r.text
            m = next(m for m in r.json()["mentions"] if m["ambiguous"])
            assert m["chosen"] is None and "not JSON (text/html" in m["reason"], m
            t0 = time.monotonic()
            r = client.post("/ask", json=ask | {"question": "הגבר קרא בקול עם הזריחה"})
            took = time.monotonic() - t0
    assert r.status_code == 502 and r.headers["content-type"].startswith(
        "application/problem+json"), r.text
    assert "deadline" in r.json()["detail"] and took < 3, (r.text, took)


def test_the_bounds_install_or_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds sit in the HTTP client's connection pools; a client without them is refused
    (a ConfigError), never used unbounded."""
    import httpx2

    from kg_rag.errors import ConfigError
    from kg_rag.senses.llm.transport import bounded_http_client

    client = bounded_http_client(5.0)
    pools = [t._pool for t in [client._transport, *client._mounts.values()]  # type: ignore[attr-defined]
             if t is not None]
    assert pools and all(type(p._network_backend).__name__ == "BoundedBackend" for p in pools)
    client.close()

    class Changed:
        def __init__(self, **kw: object) -> None:
            self._transport = object()
            self._mounts: dict[str, object] = {}

        def close(self) -> None:
            return None

    monkeypatch.setattr(httpx2, "Client", Changed)
    with pytest.raises(ConfigError, match="no way to bound"):
        bounded_http_client(5.0)
