"""IRIs minted by the loaders, and helpers for file names and language tags."""

from __future__ import annotations

import re
from pathlib import Path

from kg_rag.namespaces import ID
from kg_rag.text import nfc

# ASCII characters an IRI path segment must not carry raw, plus bidi/format controls
_UNSAFE = re.compile("[\x00-\x20<>\"{}|\\\\^`#%?/\\[\\]\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# ISO 639-3 individual-language codes that documents and detectors call by their 639-1 code
_LANG_ALIASES = {"arb": "ar", "cmn": "zh", "zsm": "ms", "nob": "nb", "pes": "fa", "ekk": "et"}


def segment(text: str) -> str:
    """``text`` as one IRI path segment (NFC; unsafe characters percent-encoded)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), nfc(text))


def source_graph_iri(path: Path) -> str:
    """The default graph IRI of a source file: ``…/id/source/<file stem>``."""
    return f"{ID}source/{segment(file_stem(path))}"


def file_stem(path: Path) -> str:
    name = path.name
    if name.endswith(".gz"):
        name = name[:-3]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def lang_tag(tag: str | None) -> str:
    """A language tag as stored on literals: lower case, 639-3 aliases mapped to 639-1."""
    if not tag:
        return ""
    parts = tag.replace("_", "-").split("-")
    parts[0] = _LANG_ALIASES.get(parts[0].lower(), parts[0].lower())
    return "-".join(parts)
