"""LLM prompt size per ambiguous mention on the demo, against the loopback test server.

    python -m bench.work_tokens DEMO_STORE

Every demo question is asked with ``wsd="llm"`` through the real API and the real ``openai``
client, talking to ``tests/support/llm_server.py`` on 127.0.0.1 (which answers S1 for every mention and
reports ``usage``). Counted: the requests the server saw, the mentions in their prompts, the
prompt characters, and the token counts the API reports (``Answer.tokens_in``). The test server
estimates tokens as characters ÷ 3 (no tokenizer is available offline), so the characters are
the exact figure and the tokens an estimate.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    store = argv[0]
    sys.path.insert(0, ".")
    from kg_rag.api import KnowledgeGraph
    from kg_rag.cli.demo import demo_questions
    from kg_rag.settings import settings
    from kg_rag.store import open_store
    from tests.support.llm_server import KEY, LlmServer, choose, mention_blocks

    out: dict[str, object] = {}
    with LlmServer(choose({})) as srv:
        cfg = settings().with_(llm_base_url=srv.url, llm_api_key=KEY, llm_model="test-model",
                               llm_timeout=10.0)
        kg = KnowledgeGraph(open_store(path=store, config=cfg), cfg)
        tokens_in = tokens_out = calls = ambiguous = 0
        for q in demo_questions(paper_only=False):
            a = kg.ask(q["text"], lang=q.get("lang"), k=3, wsd="llm")
            tokens_in += a.tokens_in
            tokens_out += a.tokens_out
            calls += a.llm_calls
            ambiguous += sum(1 for m in a.mentions if m.mention.ambiguous)
        kg.close()
        reqs = srv.chat_requests
        prompt_chars = sum(len(m.get("content") or "") for r in reqs for m in r.body["messages"])
        mentions_sent = sum(len(mention_blocks(r.user)) for r in reqs)
        out = {"questions": len(demo_questions(paper_only=False)), "requests": len(reqs),
               "llm_calls": calls, "ambiguous": ambiguous, "mentions_sent": mentions_sent,
               "prompt_chars": prompt_chars, "tokens_in": tokens_in, "tokens_out": tokens_out}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
