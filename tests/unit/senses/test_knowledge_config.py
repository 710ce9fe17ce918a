"""The knowledge selector's config: every constant in one frozen object whose hash is the agent
version, so a decision stored under other constants (or other code) is never reused."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from kg_rag.model import Candidate, Mention
from kg_rag.pipeline.decide import Unit, decide
from kg_rag.resources import _files, code_digest
from kg_rag.senses.knowledge.config import CODE, KnowledgeSelectorConfig, Weights
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import Change, EmbeddedStore
from tests.support.senses_fixture import ILI, bank_candidates, load_fixture


def _perturbed(obj: Any) -> list[Any]:
    """One copy of ``obj`` per leaf field (nested dataclasses included), that field changed."""
    out: list[Any] = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            changed: list[Any] = _perturbed(value)
        elif value is None:
            changed = [3]
        elif isinstance(value, str):
            changed = [value + "-other"]
        else:
            changed = [value + 1]
        out += [dataclasses.replace(obj, **{f.name: c}) for c in changed]
    return out


def test_every_constant_changes_the_version() -> None:
    base = KnowledgeSelectorConfig()
    variants = _perturbed(base)
    assert len(variants) >= 30   # every weight of every regime, PPR, margins, frames, cues, prior
    versions = {base.version()} | {v.version() for v in variants}
    assert len(versions) == len(variants) + 1
    assert KnowledgeSelectorConfig().version() == base.version()   # stable for equal contents
    assert len(base.version()) == 10 and int(base.version(), 16) >= 0


def test_the_config_is_frozen_and_the_selector_takes_its_version(mem_store: EmbeddedStore) -> None:
    config = KnowledgeSelectorConfig(hops=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.hops = 2  # type: ignore[misc]
    sel = KnowledgeSelector(mem_store, config)
    assert sel.agent.version == config.version() != KnowledgeSelector(mem_store).agent.version
    assert config.weights_of("xl-freq") is config.xl_freq and config.weights_of("") is config.english


def test_the_code_digest_covers_every_file_of_a_package(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "digestpkg"
    (pkg / "data" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("X = 1\n")
    (pkg / "data" / "stop.txt").write_text("a\nthe\n")
    (pkg / "data" / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    assert sorted(name for name, _ in _files(pkg)) == ["__init__.py", "data/stop.txt"]
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "digestpkg", raising=False)
    code_digest.cache_clear()
    try:
        first = code_digest(("digestpkg",))
        (pkg / "data" / "stop.txt").write_text("a\nthe\nof\n")   # a data file: a new algorithm
        code_digest.cache_clear()
        assert code_digest(("digestpkg",)) != first
    finally:
        code_digest.cache_clear()
    assert len(code_digest(CODE)) == 64   # the selector's packages: its own and kg_rag.text


def test_a_decision_stored_under_other_constants_is_not_reused(mem_store: EmbeddedStore, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    store = load_fixture(mem_store)
    context = "they pulled the canoe up on the river bank"
    bank = Mention(context.index("bank"), len(context), "bank", "en", bank_candidates())
    river = Mention(context.index("river"), context.index("river") + 5, "river", "en",
                    (Candidate(ILI + "i3", lemma="river", lang="en", rank=1),))

    def run(sel: KnowledgeSelector) -> bool:
        out = decide(store, [Unit(0, len(context), "en", context, [bank, river])], sel)
        store.apply(Change(insert=out.decision_quads))
        [d] = [d for d in out.decided if d.mention.ambiguous]
        return d.reused

    assert not run(KnowledgeSelector(store))
    assert run(KnowledgeSelector(store))     # same constants: the stored decision is reused
    other = KnowledgeSelectorConfig(english=Weights(frames=6.0, pos=1.0, lesk=0.02))
    assert not run(KnowledgeSelector(store, other))   # one weight changed: decided again
