"""Normalised views of a text with a way back to the original character offsets.

``match_key`` (kg_rag.text.normalise) is applied to the whole text in one pass, character by character
in effect: niqqud, harakat and bidi controls removed, case folded, geresh/quote variants
unified, whitespace runs collapsed to one space (a run holding a blank line becomes two
newlines: match keys have single spaces, so a multiword expression never spans paragraphs). The result
``norm`` has the same words as ``match_key`` would give them.

``scan`` is ``norm`` with every character that is not part of a word replaced by a space
(same length): padded keys (``" fruit tree "``) found in ``" " + scan + " "`` therefore always
start and end on word boundaries, whatever punctuation surrounds them.

Offsets: ``orig_start(i)`` / ``orig_end(j)`` map positions of ``norm`` back to the NFC text.
Texts without removed or expanded characters (most of them) map 1:1 without any table.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from kg_rag.text.normalise import nfc

# characters match_key deletes: Hebrew points, Arabic harakat/tatweel, bidi and zero-width controls
_REMOVED = (
    "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u064b-\u065f\u0670\u0640"
    "\u200b-\u200f\u202a-\u202e\u2066-\u2069\u061c\ufeff\u2060-\u2064"
)
_TRANSLATE = str.maketrans({"\u05f3": "'", "\u05f4": '"', "\u2019": "'", "\u05be": "-"})


def _expanding_chars() -> str:
    """Characters whose case folding is longer than one character (ß → ss, ﬁ → fi, …)."""
    out = []
    for cp in range(0x10000):  # all of them are in the BMP
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if len(c.casefold()) != 1:
            out.append(c)
    return "".join(out)


def _mark_ranges() -> str:
    """A regex character-class body of every combining mark (Unicode category M*) in the BMP."""
    ranges: list[tuple[int, int]] = []
    for cp in range(0x10000):
        if unicodedata.category(chr(cp)).startswith("M"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )


_EXPANDING = re.escape(_expanding_chars())
# one pass finds every place where the normalised text differs in length from the NFC text
_SPECIAL = re.compile(f"[{_REMOVED}]+|\\s{{2,}}|[{_EXPANDING}]")
_SPACE_1 = re.compile(r"\s")
_MARKS = _mark_ranges()
#: a word: letters, digits, underscore and combining marks
WORD = re.compile(f"[\\w{_MARKS}]+")
NON_WORD = re.compile(f"[^\\w{_MARKS}]")


@dataclass(frozen=True, slots=True)
class Normalised:
    """``norm`` (match-key form of the whole text), ``scan`` (word characters only) and the
    offset map back to ``text`` (NFC)."""

    text: str
    norm: str
    scan: str
    # segments of norm that do not map 1:1 (empty tuple: the whole text maps 1:1):
    # start in norm, start in text, length in text, plain (1:1) or special (n:m)
    _nstart: tuple[int, ...] = ()
    _ostart: tuple[int, ...] = ()
    _olen: tuple[int, ...] = ()
    _plain: tuple[bool, ...] = ()

    def orig_start(self, i: int) -> int:
        """Offset in ``text`` of the character ``norm[i]``."""
        if not self._nstart:
            return i
        k = bisect_right(self._nstart, i) - 1
        return self._ostart[k] + (i - self._nstart[k] if self._plain[k] else 0)

    def orig_end(self, j: int) -> int:
        """Offset in ``text`` just after ``norm[j - 1]``, including combining points that
        follow it in the text (``j`` > 0)."""
        if not self._nstart:
            return j
        k = bisect_right(self._nstart, j - 1) - 1
        if self._plain[k]:
            e = self._ostart[k] + (j - self._nstart[k])
        else:
            e = self._ostart[k] + self._olen[k]
        text = self.text
        while e < len(text) and text[e] in _POINTS:
            e += 1
        return e

    def words(self) -> list[tuple[int, int]]:
        """(start, end) in ``norm`` of every word."""
        return [m.span() for m in WORD.finditer(self.norm)]


def _fold(chunk: str) -> str:
    return chunk.translate(_TRANSLATE).casefold()


def normalise(text: str) -> Normalised:
    """Normalise ``text``; offsets refer to ``nfc(text)`` (kept as ``.text``)."""
    text = nfc(text)
    specials = list(_SPECIAL.finditer(text))
    if not specials:
        norm = _SPACE_1.sub(" ", _fold(text))
        return Normalised(text, norm, NON_WORD.sub(" ", norm))
    parts: list[str] = []
    nstart: list[int] = []
    ostart: list[int] = []
    olen: list[int] = []
    plain: list[bool] = []
    n = 0
    o = 0

    def add(chunk: str, at: int, length: int, is_plain: bool) -> None:
        nonlocal n
        if chunk:
            nstart.append(n)
            ostart.append(at)
            olen.append(length)
            plain.append(is_plain)
            parts.append(chunk)
            n += len(chunk)

    for m in specials:
        s, e = m.span()
        if s > o:
            add(_SPACE_1.sub(" ", _fold(text[o:s])), o, s - o, True)
        special = m.group()
        if special[0].isspace():
            add("\n\n" if special.count("\n") >= 2 else " ", s, e - s, False)
        elif special[0] not in _REMOVED_SET:
            add(_fold(special), s, e - s, False)
        o = e
    if o < len(text):
        add(_SPACE_1.sub(" ", _fold(text[o:])), o, len(text) - o, True)
    norm = "".join(parts)
    return Normalised(text, norm, NON_WORD.sub(" ", norm), tuple(nstart), tuple(ostart),
                      tuple(olen), tuple(plain))


def _char_set(ranges: str) -> frozenset[str]:
    out: set[str] = set()
    for a, b in re.findall(r"(.)(?:-(.))?", ranges, flags=re.S):
        out.update(chr(c) for c in range(ord(a), ord(b or a) + 1))
    return frozenset(out)


_REMOVED_SET = _char_set(_REMOVED)
# points that belong to the letter before them (a mention ends after them)
_POINTS = _char_set("\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670")
