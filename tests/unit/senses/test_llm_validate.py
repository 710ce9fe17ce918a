"""Validation of model answers: only exactly one of THAT mention's ids is ever accepted."""

from __future__ import annotations

import json

import pytest

from kg_rag.senses.llm.prompt import build_slots
from kg_rag.senses.llm.validate import validate
from tests.support.llm_paper import paper_requests

SLOTS = build_slots(paper_requests(), [0, 3])   # M1: 8 senses, M2 (גבר): 3 senses


def doc(*answers: dict[str, object]) -> str:
    return json.dumps({"answers": list(answers)}, ensure_ascii=False)


def a(mention: str, sense: object, confidence: object = 0.8, **kw: object) -> dict[str, object]:
    return {"mention": mention, "sense": sense, "confidence": confidence,
            "rationale": "fits", **kw}


def test_valid_answers() -> None:
    v = validate(doc(a("M1", "S2", 0.9), a("M2", "S2", 0.55)), "stop", SLOTS)
    assert (v["M1"].sense, v["M1"].confidence, v["M1"].rationale) == ("S2", 0.9, "fits")
    assert v["M2"].sense == "S2" and v["M2"].valid


BAD_IDS = [
    "\u04212",          # Cyrillic Es
    "\uff332",          # fullwidth S
    "S\uff12",          # fullwidth digit
    "S2 ",              # trailing space
    " S2",
    "s2",
    "S02",
    "S9",               # unknown
    "M1",
    "",
    None,
    2,
    ["S2"],
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_look_alikes_and_unknown_ids_are_invalid(bad: object) -> None:
    v = validate(doc(a("M1", bad), a("M2", "S1")), "stop", SLOTS)
    assert not v["M1"].valid and v["M1"].sense is None
    assert "is not one of M1's ids (S1, S2, S3, S4, S5, S6, S7, S8)" in v["M1"].problem
    assert v["M2"].valid                      # the other mention is unaffected
    assert v["M1"].problem.isascii()          # look-alikes are shown escaped


def test_another_mentions_id_is_invalid() -> None:
    v = validate(doc(a("M1", "S1"), a("M2", "S7")), "stop", SLOTS)   # S7 exists only for M1
    assert v["M1"].valid and not v["M2"].valid


@pytest.mark.parametrize("content,why", [
    (None, "empty answer"),
    ("", "empty answer"),
    ("   ", "empty answer"),
    ('{"answers": [{"mention": "M1", "sense": "S2"', "not valid JSON"),
    ("Sure! The answer is S2.", "not valid JSON"),
    ('[{"mention": "M1", "sense": "S2"}]', '"answers" list'),
    ('{"answer": []}', '"answers" list'),
    ('{"answers": {"M1": "S2"}}', '"answers" list'),
    ("[" * 5000 + "]" * 5000, "not valid JSON"),
])
def test_malformed_answers_invalidate_every_mention(content: str | None, why: str) -> None:
    v = validate(content, "stop", SLOTS)
    assert all(not x.valid and why in x.problem for x in v.values())


def test_markdown_fenced_json_from_local_models_is_read() -> None:
    v = validate("```json\n" + doc(a("M1", "S2"), a("M2", "S2")) + "\n```", "stop", SLOTS)
    assert v["M1"].valid and v["M2"].valid


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_cut_off_or_filtered_answers_are_invalid_even_if_parseable(finish: str) -> None:
    v = validate(doc(a("M1", "S2"), a("M2", "S2")), finish, SLOTS)
    assert all(not x.valid for x in v.values())
    assert ("cut off" if finish == "length" else "content filter") in v["M1"].problem


def test_missing_duplicate_and_foreign_mentions() -> None:
    v = validate(doc(a("M1", "S2"), a("M1", "S3"), a("M3", "S1"), a("M2 ", "S1")), "stop", SLOTS)
    assert not v["M1"].valid and "conflicting" in v["M1"].problem
    assert not v["M2"].valid and v["M2"].problem == "no answer for M2"
    same = validate(doc(a("M1", "S2"), a("M1", "S2"), a("M2", "S1")), "stop", SLOTS)
    assert same["M1"].valid


@pytest.mark.parametrize("conf", [-0.1, 1.5, "0.9", None, True, float("nan")])
def test_confidence_must_be_a_number_in_range(conf: object) -> None:
    content = doc(a("M1", "S2", conf), a("M2", "S1"))
    v = validate(content, "stop", SLOTS)
    assert not v["M1"].valid and "confidence" in v["M1"].problem


def test_rationale_is_cleaned_and_capped() -> None:
    v = validate(doc(a("M1", "S2", rationale="x\u202e" * 500), a("M2", "S1")), "stop", SLOTS)
    assert v["M1"].valid and len(v["M1"].rationale) <= 300 and "\u202e" not in v["M1"].rationale
