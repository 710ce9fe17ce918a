"""The tokenisers of kg-rag, one per purpose, each pattern defined here once.

* **Annotator words, with offsets** — :func:`normalise` gives the normalised views of a text
  that the annotator scans, with a way back to the original character offsets; :data:`WORD`
  (letters, digits, underscore, combining marks) and :data:`NON_WORD` cut them into words.
* **Gloss words** — :func:`gloss_tokens`: words that start with a letter and may hold inner
  apostrophes, geresh/gershayim and hyphens ("well-known", "don't", צה"ל); what gloss overlap
  counts (:func:`kg_rag.text.analyse.gloss_words` lemmatises them and drops stop words).
* **English token windows** — :func:`english_tokens`: words with their clitics ("n't", "'s")
  and punctuation runs as tokens; :mod:`kg_rag.text.english` reads the few tokens around a
  mention with them.

Normalised views: ``match_key`` (kg_rag.text.normalise) is applied to the whole text in one
pass, character by character in effect: niqqud, harakat and bidi controls removed, case folded,
geresh/quote variants unified, whitespace runs collapsed to one space (a run holding a blank
line becomes two newlines: match keys have single spaces, so a multiword expression never spans
paragraphs). The result ``norm`` has the same words as ``match_key`` would give them.

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

from kg_rag.text.normalise import BIDI_CHARS, HARAKAT_CHARS, NIQQUD_CHARS, QUOTE_FOLDS, TATWEEL, nfc

# characters match_key deletes: Hebrew points, Arabic harakat/tatweel, bidi and zero-width controls
_REMOVED = NIQQUD_CHARS + HARAKAT_CHARS + TATWEEL + BIDI_CHARS
_TRANSLATE = str.maketrans(QUOTE_FOLDS)


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
#: a gloss word: a letter, then word characters, inner apostrophes, geresh/gershayim or hyphens
GLOSS_WORD = re.compile(r"[^\W\d_](?:[\w'\u05f3\u05f4-]*\w)?", re.UNICODE)
#: an English token: a word (inner hyphens, apostrophes, dots), a clitic, or a punctuation run
ENGLISH_TOKEN = re.compile(r"\w+(?:[-'’.]\w+)*|n't|'\w+|[^\w\s]+")


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
_POINTS = _char_set(NIQQUD_CHARS + HARAKAT_CHARS)


def gloss_tokens(text: str) -> list[str]:
    """The gloss words of ``text`` as written (:data:`GLOSS_WORD`), in order."""
    return GLOSS_WORD.findall(text)


def english_tokens(text: str) -> list[str]:
    """The English tokens of ``text`` as written (:data:`ENGLISH_TOKEN`), in order."""
    return ENGLISH_TOKEN.findall(text)


__all__ = ["ENGLISH_TOKEN", "GLOSS_WORD", "NON_WORD", "WORD", "Normalised", "english_tokens",
           "gloss_tokens", "normalise"]
