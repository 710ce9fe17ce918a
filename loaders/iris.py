"""IRIs minted by the loaders, and helpers for file names and language tags."""

from __future__ import annotations

import re
from pathlib import Path

from kg_rag.namespaces import ID
from kg_rag.text.normalise import nfc

# characters an IRI path segment must not carry raw: ASCII delimiters and controls, bidi
# controls, and whatever is not an IRI "ucschar" (RFC 3987: C1 controls, private use, surrogates,
# non-characters)
_UNSAFE = re.compile(
    "[\x00-\x20<>\"{}|\\\\^`#%?/\\[\\]\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\uf8ff\ufdd0-\ufdef\ufff0-\uffff\U000e0000-\U000e0fff\U000f0000-\U0010ffff]"
    "|[\U0001fffe\U0001ffff\U0002fffe\U0002ffff\U0003fffe\U0003ffff\U0004fffe\U0004ffff"
    "\U0005fffe\U0005ffff\U0006fffe\U0006ffff\U0007fffe\U0007ffff\U0008fffe\U0008ffff"
    "\U0009fffe\U0009ffff\U000afffe\U000affff\U000bfffe\U000bffff\U000cfffe\U000cffff"
    "\U000dfffe\U000dffff\U000efffe\U000effff]"
)
# ISO 639-3 individual-language codes that documents and detectors call by their 639-1 code
_LANG_ALIASES = {"arb": "ar", "cmn": "zh", "zsm": "ms", "nob": "nb", "pes": "fa", "ekk": "et"}


def segment(text: str) -> str:
    """``text`` as one IRI path segment (NFC; unsafe characters percent-encoded)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8", "surrogatepass")),
                       nfc(text))


def source_graph_iri(path: Path) -> str:
    """The default graph IRI of a source file: ``…/id/source/<file stem>``."""
    return f"{ID}source/{segment(file_stem(path))}"


def file_stem(path: Path) -> str:
    name = path.name
    if name.endswith(".gz"):
        name = name[:-3]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


_LANG_TAG = re.compile(r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$")


def lang_tag(tag: str | None) -> str:
    """A language tag as stored on literals: lower case, 639-3 aliases mapped to 639-1.
    Raises ValueError for a value that is not a language tag."""
    if not tag:
        return ""
    if not _LANG_TAG.match(tag.replace("_", "-")):
        raise ValueError(f"{tag!r} is not a language tag")
    parts = tag.replace("_", "-").split("-")
    parts[0] = _LANG_ALIASES.get(parts[0].lower(), parts[0].lower())
    return "-".join(parts)
