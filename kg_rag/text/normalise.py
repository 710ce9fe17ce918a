"""Text normalisation shared by loaders, annotator and queries (one definition of a match key)."""

from __future__ import annotations

import re
import unicodedata

# character-class bodies (also used by kg_rag.text.tokenise, which maps offsets around them):
#: Hebrew points and cantillation (U+0591–U+05C7, without the letters and maqaf/sof pasuq punctuation)
NIQQUD_CHARS = "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
#: Arabic harakat (without tatweel, which is no point on a letter)
HARAKAT_CHARS = "\u064b-\u065f\u0670"
TATWEEL = "\u0640"
#: bidi controls and invisible format characters that must never be printed raw or reach a prompt
BIDI_CHARS = "\u200b-\u200f\u202a-\u202e\u2066-\u2069\u061c\ufeff\u2060-\u2064"
#: geresh, gershayim, right single quote and maqaf as a match key writes them
QUOTE_FOLDS = {"\u05f3": "'", "\u05f4": '"', "\u2019": "'", "\u05be": "-"}
_NIQQUD = re.compile(f"[{NIQQUD_CHARS}]")
_HARAKAT = re.compile(f"[{HARAKAT_CHARS}{TATWEEL}]")
_BIDI = re.compile(f"[{BIDI_CHARS}]")
_QUOTES = str.maketrans(QUOTE_FOLDS)
# Hebrew final letters → medial (used only for prefix/suffix analysis, not for keys)
HEBREW_LETTERS = re.compile("[\u05d0-\u05ea]")
_SPACES = re.compile(r"\s+")


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def strip_niqqud(text: str) -> str:
    return _NIQQUD.sub("", text)


def strip_bidi(text: str) -> str:
    """Remove bidi embedding/override/isolate controls and zero-width format characters."""
    return _BIDI.sub("", text)


def match_key(text: str) -> str:
    """The key under which labels and words meet: NFC, niqqud/harakat removed, case-folded,
    inner whitespace collapsed, geresh/quote variants unified."""
    t = nfc(text)
    t = strip_bidi(t)
    t = _NIQQUD.sub("", t)
    t = _HARAKAT.sub("", t)
    t = t.translate(_QUOTES)
    t = t.casefold()
    t = _SPACES.sub(" ", t).strip()
    return nfc(t)


def base_language(tag: str | None) -> str:
    """'en-GB' → 'en'; '' or None → ''."""
    if not tag:
        return ""
    return tag.split("-")[0].lower()


def is_rtl(text: str) -> bool:
    for ch in text:
        bidi = unicodedata.bidirectional(ch)
        if bidi in ("R", "AL"):
            return True
        if bidi == "L":
            return False
    return False


def for_terminal(text: str) -> str:
    """Safe for a terminal: NFC, no raw bidi controls; right-to-left runs are left to the
    terminal's own bidi algorithm (wrapping them in isolates would print raw controls)."""
    return strip_bidi(nfc(text))
