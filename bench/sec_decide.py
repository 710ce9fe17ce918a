"""decide: knowledge-based selection per ambiguous mention (≤ 10 candidates) vs the first sense."""

from __future__ import annotations

import json

from bench.context import Ctx
from bench.corpus import wsd_sentences
from bench.measure import Run, Unavailable, interleaved, percentile, run_child, worker
from bench.report import Section, Target, fmt_s, runs_table

TITLE = "decide: knowledge-based selection per ambiguous mention (≤ 10 candidates)"
TARGETS = [("knowledge selection per ambiguous mention (evidence + select), median",
            "< 20 ms median"),
           ("knowledge selection of a single mention (evidence + select), median (issue 17)",
            "≤ 5 ms median"),
           ("knowledge selection batched per sentence, warm, mentions/s (issue 17)",
            "≥ 1,000 mentions/s")]


def run(ctx: Ctx, sec: Section) -> None:
    wsd = ctx.data("wsd")
    sents: list[tuple[str, str]] = []
    for name, lang in (("semeval2007.data.xml", "en"), ("semeval2013-dev.fr.data.xml", "fr"),
                       ("semeval2013-dev.es.data.xml", "es")):
        if (wsd / name).exists():
            sents += wsd_sentences(wsd / name, lang)
    if not sents:
        sec.skip(f"no WSD sentences under {wsd}", TARGETS)
        return
    # languages in turn, so that every language is in a short run too
    by: dict[str, list[str]] = {}
    for t, lang in sents:
        by.setdefault(lang, []).append(t)
    mixed = []
    for i in range(max(len(v) for v in by.values())):
        for lang in sorted(by):
            if i < len(by[lang]):
                mixed.append({"text": by[lang][i], "lang": lang})
    work = ctx.dir("decide")
    sf = work / "sentences.jsonl"
    sf.write_text("\n".join(json.dumps(s, ensure_ascii=False) for s in mixed) + "\n", encoding="utf-8")
    max_m = ctx.pick(20, 300, 3000)
    store = ctx.store("lex")
    sec.scale = (f"up to {max_m:,} ambiguous mentions with 2–10 candidates, found by the annotator in "
                 f"the sentences of the shared WSD sets (en/fr/es, in turn); {ctx.repeat} repetitions")

    def ours(i: int) -> Run:
        return run_child(worker("work_decide", str(store), str(sf), str(max_m)))

    runs = interleaved({"decide worker": ours}, ctx.repeat, ctx.log)
    out = [r.out for r in runs["decide worker"]]

    def pool(key: str) -> list[float]:
        return [x for o in out for x in o[key]]

    ev, kn, fs = pool("evidence"), pool("knowledge"), pool("first_sense")
    if not kn:
        raise Unavailable("the annotator found no ambiguous mention with 2–10 candidates in the "
                          "sentences (is a lexicon loaded?)")
    tot = [a + b for o in out for a, b in zip(o["evidence"], o["knowledge"], strict=True)]
    e2e = pool("decide_per_mention")
    ann = pool("annotate")
    cands = pool("candidates")
    rows = [
        ["evidence (`fetch_evidence`: the store's evidence index, built or opened in setup; "
         "without it 2 SPARQL queries, cold cache per run)", ev],
        ["knowledge selector `select` alone", kn],
        ["**knowledge: evidence + select**", tot],
        ["knowledge: evidence + select, CPU time of the process", pool("knowledge_cpu")
         if all("knowledge_cpu" in o for o in out) else []],
        ["first-sense baseline `select` (its candidates come with the mention)", fs],
        ["`analysis.decide` per ambiguous mention (reuse check + evidence + select), per sentence", e2e],
        ["annotate the sentence (for reference, per sentence)", ann],
    ]
    sec.say(f"{out[0]['mentions']} mentions from {out[0]['sentences']} sentences per run "
            f"(candidates per mention: median {percentile(cands, 50):.0f}, max {max(cands):.0f}); "
            f"selector `{out[0]['agent']}`; setup (annotator lexicon + selectors) "
            f"{fmt_s(out[0]['setup_s'])}. Pooled over {len(out)} runs.", "")
    sec.table(["per mention", "p50", "p95", "p99", "n"],
              [[name, fmt_s(percentile(x, 50)), fmt_s(percentile(x, 95)), fmt_s(percentile(x, 99)),
                len(x)] for name, x in rows if x])
    runs_table(sec, runs)
    med = percentile(tot, 50)
    sec.targets.append(Target(TARGETS[0][0], fmt_s(med), f"first sense {fmt_s(percentile(fs, 50))}",
                              f"{med / max(percentile(fs, 50), 1e-9):.0f}× first sense",
                              TARGETS[0][1], med < 0.020))
    sec.targets.append(Target(TARGETS[1][0], fmt_s(med), f"first sense {fmt_s(percentile(fs, 50))}",
                              f"{med / max(percentile(fs, 50), 1e-9):.0f}× first sense",
                              TARGETS[1][1], med <= 0.005))
    batched = [o["batched_wall_cpu_n"] for o in out if o.get("batched_wall_cpu_n")]
    if batched:
        rates = sorted(b[2] / b[0] for b in batched)
        cpu_rates = sorted(b[2] / max(b[1], 1e-9) for b in batched)
        rate = rates[len(rates) // 2]
        fs_rate = 1.0 / max(percentile(fs, 50), 1e-9)
        sec.say(f"Batched (one `select` per sentence, all its mentions, warm): median {rate:.0f} "
                f"mentions/s wall, {cpu_rates[len(cpu_rates) // 2]:.0f} per CPU-second "
                f"(runs: {', '.join(f'{r:.0f}' for r in rates)}).", "")
        sec.targets.append(Target(TARGETS[2][0], f"{rate:.0f}/s", f"first sense {fs_rate:.0f}/s",
                                  f"{rate / fs_rate:.3f}× first sense", TARGETS[2][1], rate >= 1000))
