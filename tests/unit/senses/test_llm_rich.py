"""The rich prompt ``wsd-rich-v1``: sentences around the mention, every kind of evidence, bounded
length whatever the dictionary holds, data fenced as in ``wsd-v1``, and its token cost beside
the compact template's."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from kg_rag.model import Candidate, LangText, Mention, SelectionRequest, SenseEvidence
from kg_rag.senses.llm import rich
from kg_rag.senses.llm.prompt import (
    RICH_TEMPLATE,
    TEMPLATE,
    build_prompt,
    build_slots,
    estimate_tokens,
    template_text,
)
from tests.support.llm_paper import paper_requests

SENTENCES = [f"Sentence number {i} talks about orchards and weather." for i in range(40)]


def request_in(text: str, surface: str, senses: int = 2, **evidence: tuple[LangText, ...]) -> SelectionRequest:
    start = text.index(surface)
    cands = tuple(Candidate(concept=f"urn:c{i}", sense=f"urn:s{i}", lemma=surface, lang="en",
                            rank=i + 1, pos="noun") for i in range(senses))
    m = Mention(start, start + len(surface), surface, "en", cands)
    evs = tuple(SenseEvidence(c, **evidence) for c in cands)
    return SelectionRequest(m, text, "en", evs, target_lang="en")


def test_rich_template_files_ship() -> None:
    for part in ("system.txt", "user.txt", "retry.txt", "schema.json"):
        assert template_text(f"{RICH_TEMPLATE}.{part}").strip()
    assert json.loads(template_text(f"{RICH_TEMPLATE}.schema.json")) == \
        json.loads(template_text(f"{TEMPLATE}.schema.json"))    # the same answers are validated


def test_context_is_two_sentences_before_and_one_after() -> None:
    text = " ".join(SENTENCES[:20]) + " The branch broke in the storm. " + " ".join(SENTENCES[20:])
    ctx = rich.context(request_in(text, "branch"))
    assert "⟦branch⟧ broke in the storm." in ctx
    assert SENTENCES[18] in ctx and SENTENCES[19] in ctx and SENTENCES[20] in ctx
    assert SENTENCES[17] not in ctx and SENTENCES[21] not in ctx
    assert ctx.startswith("…") and ctx.endswith("…")


def test_context_drops_far_sentences_then_windows_within_its_budget() -> None:
    long_before = "Words " * 300 + "end."
    text = long_before + " The branch broke. After that it rained."
    ctx = rich.context(request_in(text, "branch"))
    assert estimate_tokens(json.dumps(ctx, ensure_ascii=False)) <= rich.CONTEXT_BUDGET
    assert "⟦branch⟧ broke." in ctx and "After that it rained." in ctx
    one = "lorem " * 500 + "branch " + "ipsum " * 500
    ctx = rich.context(request_in(one, "branch"))
    assert "⟦branch⟧" in ctx and estimate_tokens(json.dumps(ctx, ensure_ascii=False)) <= rich.CONTEXT_BUDGET


def test_block_stays_within_budget_whatever_the_evidence() -> None:
    huge = tuple(LangText("a very long definition " * 40 + str(i), lang)
                 for i in range(12) for lang in ("en", "he", "de"))
    req = request_in("The branch broke.", "branch", senses=8, definitions=huge, examples=huge,
                     translations=huge, labels=huge, usage=huge, broader=huge, schemes=huge)
    slots = build_slots([req], [0], RICH_TEMPLATE)
    assert slots[0].tokens <= rich.MENTION_BUDGET
    lines = slots[0].block.splitlines()
    assert len(lines) == 2 + 8 and all(line.startswith(f"S{i}") for i, line in
                                       enumerate(lines[2:], start=1))
    assert all('def@en "a very long definition' in line for line in lines[2:])  # always one definition


def test_rich_costs_more_tokens_than_the_compact_template_and_carries_more() -> None:
    reqs = paper_requests()
    minimal = [build_prompt(reqs, build_slots(reqs, [k]), template=TEMPLATE) for k in range(4)]
    full = [build_prompt(reqs, build_slots(reqs, [k], RICH_TEMPLATE), template=RICH_TEMPLATE)
            for k in range(4)]
    for a, b in zip(minimal, full, strict=True):
        assert b.template == RICH_TEMPLATE and a.template == TEMPLATE
        assert b.tokens_estimate > a.tokens_estimate
        assert b.sha256 != a.sha256
    # the paper's failure case: both examples of the rooster sense, its register labels
    rooster = full[3].messages[1]["content"]
    assert "[rare; Talmudic]" in rooster and 'ex@he "קם בקריאת הגבר."' in rooster


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=200))
def test_hostile_evidence_stays_data(text: str) -> None:
    ev = (LangText(text, "en"),)
    req = request_in("The branch broke.", "branch", definitions=ev, examples=ev, labels=ev,
                     broader=ev, schemes=ev, usage=ev, translations=ev)
    block = build_slots([req], [0], RICH_TEMPLATE)[0].block
    lines = block.splitlines()
    assert len(lines) == 4 and lines[2].startswith("S1") and lines[3].startswith("S2")
    assert "END DATA" not in lines and not any(line.startswith("M2") for line in lines)


def test_a_mention_not_at_its_offsets_is_found_or_left_unmarked() -> None:
    req = request_in("The branch broke.", "branch")
    moved = replace(req, mention=replace(req.mention, start=0, end=6))
    assert "⟦branch⟧" in rich.context(moved)           # found once in the text
    twice = request_in("branch and branch.", "branch")
    off = replace(twice, mention=replace(twice.mention, start=1, end=7))
    assert "⟦" not in rich.context(off)                # ambiguous: not marked at a guess
