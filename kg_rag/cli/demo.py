"""``demo``: build the demo store from the bundled sample and run the paper's four sentences."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.common import WSD_HELP, print_json, store_from_args, wsd_arg
from kg_rag.cli.render import answer_text
from kg_rag.resources import resource_path
from kg_rag.text.normalise import for_terminal


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="load the bundled sample and run the paper's four Hebrew sentences")
    p.add_argument("--wsd", type=wsd_arg, default=None, help=WSD_HELP + "; llm needs an API")
    p.add_argument("-k", type=int, default=3)
    p.add_argument("--all", action="store_true", help="run every demo question, not only the paper's four")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)


def demo_questions(paper_only: bool = True) -> list[dict[str, Any]]:
    path = resource_path("demo") / "questions.jsonl"
    qs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [q for q in qs if q.get("paper")] if paper_only else qs


def figurative_questions() -> list[dict[str, Any]]:
    """The demo's fixed figurative phrases (the paper's third open question)."""
    return [q for q in demo_questions(paper_only=False) if q.get("figurative")]


def build_demo(kg: KnowledgeGraph) -> dict[str, Any]:
    demo = resource_path("demo")
    t0 = time.perf_counter()
    loads = kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    t1 = time.perf_counter()
    rep = kg.index([demo / "documents"])
    t2 = time.perf_counter()
    return {"sources": [getattr(r, "graph", str(r)) for r in loads], "load_s": t1 - t0,
            "documents": rep.documents, "index_s": t2 - t1, "decisions": rep.decided + rep.reused}


def cmd_demo(args: argparse.Namespace) -> int:
    out: dict[str, Any] = {"questions": []}
    with KnowledgeGraph(store_from_args(args, create=True)) as kg:
        built = build_demo(kg)
        out["build"] = built
        if not args.json:
            print(f"demo store {kg.store.location}: loaded thesaurus + dictionary in {built['load_s']:.1f} s, "
                  f"indexed {built['documents']} documents in {built['index_s']:.1f} s\n")
        right = 0
        questions = demo_questions(paper_only=not args.all)
        last_iri = None
        for q in questions:
            focus = tuple(q["focus"]) if q.get("focus") else None
            a = kg.ask(q["text"], lang=q.get("lang"), k=args.k, wsd=args.wsd, focus=focus)
            chosen = [c for r in a.mentions if focus and r.mention.start < focus[1] and focus[0] < r.mention.end
                      for c in ((r.selection.chosen.concept,) if r.selection and r.selection.chosen
                                else r.mention.concepts if not r.mention.ambiguous else ())]
            ok = q.get("gold_concept") in chosen
            right += ok
            last_iri = a.question_iri
            out["questions"].append({"id": q["id"], "text": q["text"], "gold": q.get("gold_concept"),
                                     "chosen": chosen, "correct": ok, "question_iri": a.question_iri,
                                     "top": [r.doc_id for r in a.results]})
            if not args.json:
                gold = kg.labels([q["gold_concept"]], "en").get(q["gold_concept"], "?")
                print(answer_text(kg, a))
                print(for_terminal(f"  expected: {gold} — {'RIGHT' if ok else 'WRONG'}"
                                   + (f" ({q['note']})" if q.get("note") else "")) + "\n")
        out["right"], out["total"] = right, len(questions)
        if not args.all:  # --all asked them above, with every other question
            out["figurative"] = [_figurative(kg, q, args) for q in figurative_questions()]
        if args.json:
            print_json(out)
            return 0
        print(f"{right} of {len(questions)} right with the {kg.mode(args.wsd)} selector\n")
        for f in out.get("figurative", []):
            print(for_terminal(f"figurative phrase “{f['phrase']}” read as {f['read_as']}; "
                               f"top documents {', '.join(f['top']) or 'none'}: "
                               f"{'RIGHT' if f['correct'] else 'WRONG'} (expected {', '.join(f['relevant'])}, "
                               f"none of {', '.join(f['not_relevant'])})") + "\n")
        if last_iri:
            print("explain the last question (kg-rag explain IRI):")
            print(kg.explain(last_iri).text())
    return 0


def _figurative(kg: KnowledgeGraph, q: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Ask a figurative-phrase question: right when the phrase is one mention read as the gold
    concept, a relevant document comes first and no document about its literal words is found."""
    start, end = q["focus"]
    a = kg.ask(q["text"], lang=q.get("lang"), k=args.k, wsd=args.wsd, focus=(start, end))
    inside = [r for r in a.mentions if start <= r.mention.start and r.mention.end <= end]
    whole = [r for r in inside if (r.mention.start, r.mention.end) == (start, end)]
    concepts = [c for r in whole for c in r.mention.concepts]
    top = [r.doc_id for r in a.results]
    ok = (len(inside) == 1 and concepts == [q["gold_concept"]] and bool(top)
          and top[0] in q["relevant"] and not set(top) & set(q["not_relevant"]))
    gold = kg.labels([q["gold_concept"]], "en").get(q["gold_concept"], "?")
    return {"id": q["id"], "phrase": q["text"][start:end], "read_as": gold if concepts == [q["gold_concept"]]
            else ", ".join(concepts) or "nothing", "mentions_inside": len(inside), "top": top,
            "relevant": q["relevant"], "not_relevant": q["not_relevant"], "correct": ok}
