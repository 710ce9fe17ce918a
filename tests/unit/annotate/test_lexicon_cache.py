"""The lexicon's disk cache: what is read back is the index that was built (keys, owners,
per-language words, aliases, phrase automata), languages are made on first use, and a file the
cache cannot use is rebuilt, never trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.annotate.lexicon import Lexicon
from kg_rag.text.tokenise import normalise

ROWS = [("fruit tree", "en", "E1"), ("fruit", "en-GB", "E2"), ("fruit", "en", "C1"),
        ("u.s.", "en", "C2"), ("u s", "en", "C3"), ("u-s", "en", "C5"), ("unesco", "", "C4"),
        ("בד", "he", "E3"), ("rock 'n' roll", "", "C6"), ("fruit", "en", "E2"), ("arbre fruitier", "fr", "C7")]


def _same(a: Lexicon, b: Lexicon) -> None:
    assert a.languages == b.languages and a.version == b.version
    assert a.keys == b.keys and a.targets == b.targets
    assert list(a._off) == list(b._off) and list(a._tids) == list(b._tids)
    for text, lang in (("the u.s. and u s and u-s fruit tree", "en"), ("rock 'n' roll", "he"),
                       ("un arbre fruitier", "fr")):
        n = normalise(text)
        hits_a = sorted((h.start, h.end, a.keys[h.kid]) for h in a.scan(lang, n.scan, n.norm))
        hits_b = sorted((h.start, h.end, b.keys[h.kid]) for h in b.scan(lang, n.scan, n.norm))
        assert hits_a == hits_b and hits_a
    for lang, word in (("en", "fruit"), ("he", "בד"), ("fr", "unesco"), ("en", "u.s.")):
        assert a.word(lang, word) == b.word(lang, word) != []
    assert a.stats() == b.stats()
    assert a._alias == b._alias


def test_read_gives_back_the_built_lexicon(tmp_path: Path) -> None:
    built = Lexicon(ROWS, version="v1")
    path = tmp_path / "lex.npz"
    assert built.save(path)
    read = Lexicon.read(path)
    assert read._pending  # nothing made yet: languages are made when first asked for
    read.word("en", "fruit")
    assert "fr" in read._pending and "en" not in read._pending
    _same(built, read)


def test_unusable_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a cache")
    with pytest.raises((OSError, ValueError)):
        Lexicon.read(bad)
    # a newline cannot be stored in the file's packed strings: then nothing is written
    odd = Lexicon([("a\nb", "en", "C1"), ("c", "en", "C2")], version="v")
    assert not odd.save(tmp_path / "odd.npz") and not (tmp_path / "odd.npz").exists()
