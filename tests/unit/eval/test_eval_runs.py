"""Pieces of run records, the threshold trade-off and the store's default, without a server."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kg_rag.errors import ConfigError, InputError
from kg_rag.eval.calibration import by_threshold
from kg_rag.eval.llm_use import Tradeoff
from kg_rag.eval.runs import _split, check_prices, record_path
from kg_rag.model import Agent
from kg_rag.senses.mode import WsdMode
from kg_rag.senses.store_default import (
    SETTINGS_GRAPH,
    check_not_worse,
    read_default,
    record_default,
    resolve_default,
)
from kg_rag.store import EmbeddedStore

LLM = Agent("llm", "wsd-v1", model="m-1", endpoint_host="llm.example")


def test_by_threshold_cuts_the_decisions_at_a_probability() -> None:
    p = [0.95, 0.5, 0.7, 0.8, 0.99]
    right = [True, False, True, False, True]
    assert by_threshold(p, right, 0.8) == (5, 2, 2)      # 0.5, 0.7 sent; 0.8 kept (wrong)
    assert by_threshold(p, right, 0.0) == (5, 0, 3)
    assert by_threshold(p, right, 1.0) == (5, 5, 0)
    assert by_threshold([], [], 0.5) == (0, 0, 0)
    with pytest.raises(ValueError):
        by_threshold([0.1], [], 0.5)


def test_tradeoff_in_words() -> None:
    t = Tradeoff(0.8, 432, 375, 45)
    assert t.describe() == ("at threshold 0.8, 86.8 % of the ambiguous mentions (375 of 432) go to "
                            "the LLM; the knowledge selector is right on 78.9 % of the other 57")
    assert t.as_dict()["kept_accuracy"] == pytest.approx(45 / 57, abs=1e-4)
    assert "none are left" in Tradeoff(1.0, 3, 3, 0).describe()


def test_token_shares_add_up() -> None:
    for total, n in ((10, 3), (0, 2), (7, 7), (5, 1)):
        assert sum(_split(total, n, k) for k in range(n)) == total


def test_record_path(tmp_path: Path) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert record_path(None, None, "semeval2007", WsdMode.KNOWLEDGE) is None
    assert record_path(None, None, "semeval/2007", WsdMode.KNOWLEDGE_LLM, when) == \
        Path("wsd-run-semeval-2007-knowledge-llm-20260102T030405Z.json")
    assert record_path(None, str(tmp_path / "x.key.txt"), "c", WsdMode.LLM) == tmp_path / "x.run.json"
    assert record_path(str(tmp_path / "r.json"), None, "c", WsdMode.FIRST_SENSE) == tmp_path / "r.json"
    with pytest.raises(InputError, match="is a folder"):
        record_path(str(tmp_path), None, "c", WsdMode.LLM)
    with pytest.raises(InputError, match="does not exist"):
        record_path(str(tmp_path / "no" / "r.json"), None, "c", WsdMode.LLM)


def test_prices() -> None:
    check_prices(None, None)
    check_prices(0.0, 2.5)
    for bad in ((1.0, None), (None, 1.0), (float("nan"), 1.0), (1.0, -1.0)):
        with pytest.raises(InputError):
            check_prices(*bad)


def test_never_worse_than_the_prior() -> None:
    check_not_worse(WsdMode.LLM, LLM, 0.56, 0.552, "semeval2007", force=False)
    check_not_worse(WsdMode.LLM, LLM, 0.552, 0.552, "semeval2007", force=False)   # a tie is not worse
    check_not_worse(WsdMode.LLM, LLM, 0.40, 0.552, "semeval2007", force=True)
    with pytest.raises(ConfigError) as e:
        check_not_worse(WsdMode.LLM, LLM, 0.512, 0.552, "semeval2007", force=False)
    assert str(e.value) == (
        "refused as this store's default: llm with model m-1 at llm.example scored F1 51.2 on "
        "semeval2007, below the first-sense baseline's 55.2; nothing was changed (pass --force "
        "to set it anyway)")


def test_the_record_round_trips_and_replaces_the_old_one(caplog: pytest.LogCaptureFixture) -> None:
    store = EmbeddedStore(":memory:")
    assert read_default(store) is None
    assert resolve_default(store, WsdMode.FIRST_SENSE, "m-1", "llm.example") is WsdMode.FIRST_SENSE
    with pytest.raises(ConfigError):
        record_default(store, WsdMode.LLM, LLM, 0.4, 0.5, 10, "dev")
    assert read_default(store) is None and SETTINGS_GRAPH not in store.named_graphs()
    rec = record_default(store, WsdMode.LLM, LLM, 0.4, 0.5, 10, "dev", force=True)
    assert rec.forced and rec.mode is WsdMode.LLM and rec.model == "m-1"
    assert "F1 40.0 vs first sense 50.0 on dev (10 instances), forced" in rec.describe()
    k = Agent("knowledge", "k1")
    rec = record_default(store, WsdMode.KNOWLEDGE_LLM, Agent("knowledge+llm", "k1+wsd-v1@0.8",
                         model="m-2", endpoint_host="h"), 0.6, 0.5, 455, "semeval2007")
    assert not rec.forced and rec.instances == 455 and rec.corpus == "semeval2007"
    assert record_default(store, WsdMode.KNOWLEDGE, k, 0.6, 0.5, 1, "x").mode is WsdMode.KNOWLEDGE
    rows = store.select("select-wsd-default")
    assert len(rows) == 1                      # replaced, not added to
    record_default(store, WsdMode.KNOWLEDGE_LLM, Agent("knowledge+llm", "v", model="m-2",
                   endpoint_host="h"), 0.6, 0.5, 455, "semeval2007")
    with caplog.at_level(logging.WARNING, logger="kg_rag.senses.store_default"):
        assert resolve_default(store, WsdMode.KNOWLEDGE, "m-3", "h") is WsdMode.KNOWLEDGE_LLM
    assert "measured with model m-2 at h, not m-3 at h" in caplog.text
