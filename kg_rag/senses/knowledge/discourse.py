"""One sense per discourse, as a soft Bayesian prior (Gale, Church & Yarowsky 1992).

The mentions a selector decides in one batch come from one text (a document, or a book of a
corpus in ``eval wsd``). A word used several times in one text tends to keep one sense; how
strongly depends on the dictionary's granularity, so it is no hard rule but a prior:

* in a text, the senses of one word (mentions with the same candidates) are drawn from a
  text-level distribution ``θ ~ Dirichlet(κ · π)`` centred on the word's global prior ``π``
  (the selector's own prior, as a calibrated probability), ``κ`` its concentration;
* the predictive distribution of one mention's sense given the others is
  ``θ_i = (κ · π + Σ_{j≠i} q_j) / (κ + n − 1)``, with the others' first-pass probabilities
  ``q_j`` (their own context evidence and the global prior) as soft counts;
* ``θ_i`` replaces ``π`` in the mention's score: ``score_i + (log θ_i − log π) / s`` (``s`` the
  regime's inverse temperature, so that after tempering exactly the prior factor is replaced).

With one mention of a word in the text nothing changes; with many, a mention whose own context
says little follows what the text's other mentions of the word say. ``κ`` is
:attr:`~kg_rag.senses.knowledge.config.KnowledgeSelectorConfig.discourse` (0: off).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

import numpy as np


def _softmax(x: np.ndarray) -> np.ndarray:
    e: np.ndarray = np.exp(x - x.max())
    out: np.ndarray = e / e.sum()
    return out


def pooled(keys: Sequence[Hashable | None], totals: Sequence[np.ndarray | None],
           priors: Sequence[np.ndarray | None], sharpness: Sequence[float],
           kappa: float) -> list[np.ndarray | None]:
    """The scores of a batch with each mention's prior replaced by its text-level predictive.

    ``keys[i]`` names the word of mention ``i`` (None: not pooled), ``totals[i]`` its
    log-linear scores, ``priors[i]`` the prior part of them (log scale, any offset),
    ``sharpness[i]`` its regime's inverse temperature; returns new scores (the same arrays
    where nothing changes)."""
    out = list(totals)
    if kappa <= 0:
        return out
    groups: dict[Hashable, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        if k is not None and totals[i] is not None and priors[i] is not None:
            groups[k].append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        q = {i: _softmax(sharpness[i] * np.asarray(totals[i])) for i in members}
        total_q = sum(q.values())
        n = len(members)
        for i in members:
            s = sharpness[i]
            pi = _softmax(s * np.asarray(priors[i]))
            theta = (kappa * pi + (total_q - q[i])) / (kappa + n - 1)
            t = np.asarray(totals[i], dtype=np.float64)
            out[i] = t + (np.log(np.maximum(theta, 1e-300)) - np.log(np.maximum(pi, 1e-300))) / s
    return out


__all__ = ["pooled"]
