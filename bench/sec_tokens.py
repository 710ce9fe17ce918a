"""tokens: LLM prompt size per ambiguous mention on the demo (loopback test server)."""

from __future__ import annotations

from bench.context import ROOT, Ctx
from bench.measure import run_child, worker
from bench.report import Section, Target

TITLE = "LLM prompt tokens per ambiguous mention on the demo (loopback OpenAI-compatible server)"
TARGETS = [("prompt tokens per ambiguous mention (report only)", "report")]


def run(ctx: Ctx, sec: Section) -> None:
    if not (ROOT / "tests" / "support" / "llm_server.py").exists():
        sec.skip("tests/support/llm_server.py does not exist yet", TARGETS)
        return
    store = ctx.copy_store("demo", ctx.out / "tokens" / "store")
    sec.scale = "every question of demo/questions.jsonl, once (deterministic: no repetition needed)"
    r = run_child(worker("work_tokens", str(store)))
    o = r.out
    per = o["tokens_in"] / max(o["mentions_sent"], 1)
    chars = o["prompt_chars"] / max(o["mentions_sent"], 1)
    sec.say("Each demo question asked with `--wsd llm` through the API and the real `openai` client "
            "against `tests/support/llm_server.py` on loopback. The server's token counts are an estimate "
            "(characters ÷ 3; no tokenizer offline), so prompt characters are given as well.", "")
    sec.table(["questions", "LLM requests", "ambiguous mentions in questions", "mentions in prompts",
               "prompt chars", "prompt tokens (server estimate)", "completion tokens",
               "prompt chars / mention", "prompt tokens / mention"],
              [[o["questions"], o["requests"], o["ambiguous"], o["mentions_sent"], o["prompt_chars"],
                o["tokens_in"], o["tokens_out"], f"{chars:.0f}", f"{per:.0f}"]])
    sec.command(r.command)
    sec.targets.append(Target(TARGETS[0][0], f"{per:.0f} tokens ({chars:.0f} chars)", "—", "—",
                              "report", None if o["mentions_sent"] == 0 else True,
                              "no mention reached the LLM" if o["mentions_sent"] == 0 else ""))
