"""Open Multilingual Wordnet tab files (``*.tab``, OMW 1.x format) → WN-LMF → RDF.

The format many wordnets still come in (the Wiktionary-derived lexicons of 150 languages among
them): a header line ``# name<TAB>lang<TAB>url<TAB>licence``, then one line per fact::

    00022219-a<TAB>heb:lemma<TAB>נאמן
    02084071-n<TAB>fra:def<TAB>animal domestique …
    02084071-n<TAB>fra:exe<TAB>…

Synsets are WordNet 3.0 offsets, so they meet other lexicons only through the Interlingual Index:
the CILI map ``ili-map-pwn30.tab`` (``i1<TAB>00001740-a`` a line) — found beside the file, or
given by ``KG_RAG_ILI_MAP`` — turns each offset into its ILI concept, the node Open English
WordNet's and OMW's synsets share (:mod:`loaders.wnlmf`). The file is rewritten as a WN-LMF
lexicon (an entry per lemma and part of speech, its senses in file order, the synsets with their
ILI id, definitions and examples) and mapped by the WN-LMF loader, so both formats give the same
graph shape. A synset whose offset the map lacks keeps a node of its own (no ILI id), as in
WN-LMF; the count is a warning.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from kg_rag.errors import LoadError
from kg_rag.text.normalise import nfc
from loaders import wnlmf
from loaders.common import Parsed, read_all

#: the CILI map looked for beside a tab file when KG_RAG_ILI_MAP is not set
ILI_MAP_NAME = "ili-map-pwn30.tab"
MEDIA_TYPE = "text/tab-separated-values"

_OFFSET = re.compile(r"^\d{8}-[nvasr]$")
_HEADER = re.compile(r"^#\s*([^\t]+)\t([A-Za-z]{2,3}(?:-[A-Za-z0-9]+)?)\t([^\t]*)\t?(.*)$")
#: ISO 639-3 codes of the tab files → the BCP 47 tags the rest of kg-rag uses
_ISO3 = {"heb": "he", "eng": "en", "fra": "fr", "spa": "es", "arb": "ar", "ara": "ar", "deu": "de",
         "ita": "it", "por": "pt", "nld": "nl", "pol": "pl", "rus": "ru", "jpn": "ja", "cmn": "zh",
         "zsm": "ms", "ind": "id", "fin": "fi", "swe": "sv", "dan": "da", "nob": "nb", "nno": "nn",
         "ell": "el", "tur": "tr", "cat": "ca", "eus": "eu", "glg": "gl", "ron": "ro", "ces": "cs",
         "slk": "sk", "slv": "sl", "hrv": "hr", "bul": "bg", "ukr": "uk", "fas": "fa", "tha": "th",
         "kor": "ko", "hun": "hu", "lit": "lt", "lav": "lv", "est": "et", "isl": "is"}


def is_omw_tab(path: Path, head: bytes) -> bool:
    """A ``.tab`` file whose first line is an OMW header (``# name<TAB>lang<TAB>url…``)."""
    if not path.name.lower().endswith((".tab", ".tab.gz")):
        return False
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    return _HEADER.match(first) is not None


def ili_map_path(path: Path) -> Path:
    """The CILI map for ``path``: ``KG_RAG_ILI_MAP``, else ``ili-map-pwn30.tab`` beside it."""
    env = os.environ.get("KG_RAG_ILI_MAP")
    found = Path(env).expanduser() if env else path.parent / ILI_MAP_NAME
    if not found.is_file():
        raise LoadError(f"{path}: an OMW tab file names synsets by WordNet 3.0 offsets, which meet "
                        f"other lexicons through the ILI: put {ILI_MAP_NAME} (CILI) beside it or "
                        f"set KG_RAG_ILI_MAP to its path")
    return found


def read_ili_map(path: Path) -> dict[str, str]:
    """WordNet 3.0 offset (``00001740-a``) → ILI id (``i1``); adjective satellites (``-s``)
    are looked up as ``-a`` too (CILI writes both as ``-a``)."""
    out: dict[str, str] = {}
    for no, line in enumerate(read_all(path).decode("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0].startswith("i") or not _OFFSET.match(parts[1].strip()):
            raise LoadError(f"{path}:{no}: expected 'iNNN<TAB>NNNNNNNN-p' (a CILI map), got {line[:80]!r}")
        out[parts[1].strip()] = parts[0].strip()
    return out


def _language(code: str) -> str:
    base, _, rest = code.partition("-")
    base = _ISO3.get(base.lower(), base.lower())
    return f"{base}-{rest}" if rest else base


def to_lmf(path: Path, ili: dict[str, str]) -> tuple[str, int]:
    """The WN-LMF text of the tab file ``path`` and the number of synsets the map lacks."""
    lines = read_all(path).decode("utf-8").splitlines()
    if not lines or (head := _HEADER.match(lines[0].rstrip("\r"))) is None:
        raise LoadError(f"{path}:1: expected an OMW header '# name<TAB>lang<TAB>url<TAB>licence'")
    label, code, url, licence = (x.strip() for x in head.groups())
    lang = _language(code)
    lex = "omw-" + re.sub(r"[^A-Za-z0-9-]+", "-", path.name.split(".")[0]).strip("-")
    entries: dict[tuple[str, str], list[str]] = {}
    defs: dict[str, list[str]] = {}
    exes: dict[str, list[str]] = {}
    synsets: dict[str, None] = {}
    for no, raw in enumerate(lines[1:], 2):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 3 or not _OFFSET.match(parts[0]) or ":" not in parts[1]:
            raise LoadError(f"{path}:{no}: expected 'NNNNNNNN-p<TAB>lang:type<TAB>text', got {line[:80]!r}")
        offset, kind, text = parts[0], parts[1].split(":", 1)[1], nfc(parts[2].strip())
        if not text:
            continue
        pos = "a" if offset[-1] == "s" else offset[-1]
        key = f"{offset[:8]}-{pos}"
        synsets[key] = None
        if kind == "lemma":
            senses = entries.setdefault((text, pos), [])
            if key not in senses:
                senses.append(key)
        elif kind == "def":
            defs.setdefault(key, []).append(text)
        elif kind.startswith("exe"):
            exes.setdefault(key, []).append(text)
    if not entries:
        raise LoadError(f"{path}: no ':lemma' lines: nothing to load")
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n<LexicalResource>\n',
           f'<Lexicon id={quoteattr(lex)} label={quoteattr(label)} language={quoteattr(lang)} '
           f'email="" license={quoteattr(licence or "unknown")} version="tab" url={quoteattr(url)}>\n']
    for n, ((lemma, pos), senses) in enumerate(entries.items()):
        word = re.sub(r"\s+", "_", lemma)
        out.append(f'<LexicalEntry id={quoteattr(f"{lex}-{word}-{pos}")}>'
                   f'<Lemma writtenForm={quoteattr(lemma)} partOfSpeech="{pos}"/>')
        out += [f'<Sense id={quoteattr(f"{lex}-{word}-{key[:8]}-{pos}-{n}")} '
                f'synset={quoteattr(f"{lex}-{key}")}/>' for key in senses]
        out.append("</LexicalEntry>\n")
    missing = 0
    for key in synsets:
        i = ili.get(key) or (ili.get(key[:8] + "-s") if key.endswith("-a") else None)
        missing += i is None
        attr = f" ili={quoteattr(i)}" if i else ""
        body = "".join(f"<Definition>{escape(d)}</Definition>" for d in defs.get(key, ()))
        body += "".join(f"<Example>{escape(e)}</Example>" for e in exes.get(key, ()))
        out.append(f'<Synset id={quoteattr(f"{lex}-{key}")}{attr} partOfSpeech="{key[-1]}">{body}</Synset>\n')
    out.append("</Lexicon>\n</LexicalResource>\n")
    return "".join(out), missing


def parse(path: Path, progress: Callable[[int], None] | None = None) -> Parsed:
    """Map an OMW tab file (through WN-LMF) to N-Triples in a spool file; nothing is written."""
    ili = read_ili_map(ili_map_path(path))
    text, missing = to_lmf(path, ili)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".xml", delete=False) as f:
        f.write(text)
        lmf = Path(f.name)
    try:
        parsed = wnlmf.parse(lmf, progress)
    finally:
        lmf.unlink(missing_ok=True)
    parsed.kind, parsed.media_type = "omw-tab", MEDIA_TYPE
    if missing:
        parsed.warnings.append(f"{missing} synset(s) of {path.name} have no ILI id in the CILI map: "
                               f"they meet no other lexicon")
    return parsed


__all__ = ["ILI_MAP_NAME", "MEDIA_TYPE", "ili_map_path", "is_omw_tab", "parse", "read_ili_map", "to_lmf"]
