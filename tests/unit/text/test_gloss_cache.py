"""The gloss words kept between processes: what a later process reads back is what the first
computed, a damaged or foreign file is ignored, and only a process that learned enough writes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from kg_rag.text import analyse, gloss_cache
from kg_rag.text.gloss_cache import MISSING, GlossCache, cache_path, opened
from kg_rag.text.tokenise import gloss_tokens

GLOSSES = [
    ("the branches of a tree bend under the weight of ripe fruit", "en"),
    ("a financial institution that accepts deposits and channels the money into lending", "en"),
    ("sloping land (especially the slope beside a body of water); they pulled the canoe up on the bank", "en"),
    ("tejido de algodón o lino que se usa para hacer vestidos", "es"),
    ("une personne qui travaille dans une banque et prête de l'argent", "fr"),
    ("בד שתפרה אמי מן הכותנה", "he"),
    ("I a of to", "en"),   # stop words and one-letter words: no lemma, kept as such
]


def _tokens() -> list[tuple[str, str]]:
    return [(w, lang) for text, lang in GLOSSES for w in gloss_tokens(text)]


def test_a_later_process_reads_back_what_the_first_computed(tmp_path: Path) -> None:
    first = GlossCache(tmp_path / "g.bin")
    expected = {}
    for w, lang in _tokens():
        expected[(w, lang)] = analyse._gloss_lemma(w, lang)
        first.put(w, lang, expected[(w, lang)])
    assert None in expected.values() and any(expected.values())
    assert first.save(min_new=1)
    later = GlossCache(tmp_path / "g.bin")
    assert len(later) == len(expected) and not later.new
    assert {k: later.get(*k) for k in expected} == expected
    assert later.get("neverseen", "en") is MISSING
    assert later.get("branches", "fr") is MISSING     # per language


def test_gloss_words_are_the_same_from_the_kept_table(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``gloss_words`` through a table read from disk gives what computing them gives."""
    computed = {(t, lang): [analyse._gloss_lemma(w, lang) for w in gloss_tokens(t) if len(w) > 1]
                for t, lang in GLOSSES}
    kept = GlossCache(tmp_path / "g.bin")
    for (t, lang), lemmas in computed.items():
        for w, lw in zip([w for w in gloss_tokens(t) if len(w) > 1], lemmas, strict=True):
            kept.put(w, lang, lw)
    kept.save(min_new=1)
    table = GlossCache(tmp_path / "g.bin")
    monkeypatch.setattr(analyse, "_kept", lambda: table)
    monkeypatch.setattr(analyse, "_gloss_lemma", lambda w, lang: pytest.fail(f"{w!r} computed again"))
    analyse._gloss_word.cache_clear()
    try:
        for (t, lang), lemmas in computed.items():
            assert analyse.gloss_words(t, lang) == [lw for lw in lemmas if lw is not None]
    finally:
        analyse._gloss_word.cache_clear()


@pytest.mark.parametrize("damage", [
    lambda b: b[: len(b) - 3],                       # truncated
    lambda b: b"something else\n" + b,               # not this layout
    lambda b: b.replace(b"\n", b"0\n", 1),          # a part's size off
])
def test_a_damaged_table_is_ignored_with_a_warning(tmp_path: Path, damage: Callable[[bytes], bytes],
                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "g.bin"
    good = GlossCache(path)
    for w, lang in _tokens():
        good.put(w, lang, analyse._gloss_lemma(w, lang))
    good.save(min_new=1)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="kg_rag.text.gloss_cache"):
        read = GlossCache(path)
    assert len(read) == 0 and "gloss word cache" in caplog.text


def test_only_a_process_that_learned_enough_writes_at_exit(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gloss_cache, "_OPEN", {})
    hooks: list[Callable[[], object]] = []
    cache = opened(tmp_path, at_exit=hooks.append)
    assert cache is opened(tmp_path, at_exit=hooks.append) and len(hooks) == 1
    assert cache.path == cache_path(tmp_path) and gloss_cache.digest() in cache.path.name
    cache.put("branches", "en", "branch")
    hooks[0]()                                   # one new token: below MIN_NEW, nothing written
    assert not cache.path.exists()
    for i in range(gloss_cache.MIN_NEW):
        cache.put(f"word{i}", "en", f"word{i}")
    hooks[0]()
    assert cache.path.exists() and GlossCache(cache.path).get("branches", "en") == "branch"


def test_an_unwritable_folder_is_a_warning_not_an_error(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = GlossCache(blocker / "g.bin")
    cache.put("branches", "en", "branch")
    with caplog.at_level(logging.WARNING, logger="kg_rag.text.gloss_cache"):
        assert cache.save(min_new=1) is False
    assert "could not write the gloss word cache" in caplog.text and cache.new
