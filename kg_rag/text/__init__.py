"""Text analysis shared by every stage: Unicode normalisation and match keys
(:mod:`.normalise`), language identification (:mod:`.langid`), word analyses — lemmas, Hebrew
prefix letters, stop words (:mod:`.analyse`, :mod:`.hebrew`, ``stopwords/``) — and English token
windows for the sense selectors' context signals (:mod:`.english`).

Only the normalisation functions are imported here; the other modules load their resources
(lemma tables, the language classifier) when first used.
"""

from __future__ import annotations

from kg_rag.text.normalise import (
    base_language,
    for_terminal,
    is_rtl,
    match_key,
    nfc,
    strip_bidi,
    strip_niqqud,
)

__all__ = ["base_language", "for_terminal", "is_rtl", "match_key", "nfc", "strip_bidi", "strip_niqqud"]
