"""Read documents from files and folders: plain text, Markdown, HTML, JSON Lines.

Every problem is an :class:`InputError` naming the file (and line for JSON Lines), raised before
anything is written: binary files, undecodable text, documents over the size limit, bad JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.text.normalise import nfc

SUFFIXES = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown",
            ".html": "html", ".htm": "html", ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass(frozen=True, slots=True)
class SourceDocument:
    id: str
    text: str
    lang: str | None = None
    title: str = ""
    source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


class _TextExtractor(HTMLParser):
    _SKIP = {"script", "style", "head", "template", "noscript"}
    _BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section",
              "article", "blockquote", "pre", "ul", "ol", "table", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP and self._skip:
            self._skip -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML document; markup dropped, paragraphs kept as blank lines."""
    p = _TextExtractor()
    p.feed(html)
    p.close()
    raw = "".join(p.parts)
    paras = [" ".join(block.split()) for block in raw.split("\n\n")]
    return " ".join(p.title.split()), "\n\n".join(x for x in paras if x)


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: looks like a binary file, not text; give .txt, .md, .html or .jsonl")
    try:
        return nfc(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte {e.start}); convert it to UTF-8 first") from None


def _check_size(name: str, size: int, limit: int) -> None:
    if size > limit:
        raise InputError(f"{name}: {size} bytes is over the limit of {limit} bytes "
                         f"(set KG_RAG_MAX_DOCUMENT_BYTES to raise it)")


def doc_from_record(rec: Any, where: str, limit: int) -> SourceDocument:
    """One JSON object {"id", "text", "lang"?, "title"?, "metadata"?} → SourceDocument."""
    if not isinstance(rec, dict):
        raise InputError(f"{where}: expected a JSON object with id and text")
    doc_id = rec.get("id", rec.get("_id"))
    text = rec.get("text")
    if not isinstance(doc_id, (str, int)) or str(doc_id).strip() == "":
        raise InputError(f"{where}: missing or empty \"id\"")
    if not isinstance(text, str):
        raise InputError(f"{where}: missing \"text\" (a string)")
    _check_size(where, len(text.encode("utf-8")), limit)
    lang = rec.get("lang") or (rec.get("metadata") or {}).get("lang")
    title = rec.get("title") or ""
    raw_meta = rec.get("metadata")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    return SourceDocument(str(doc_id).strip(), nfc(text), lang or None, nfc(str(title)), where, meta)


def read_path(path: Path, limit: int) -> list[SourceDocument]:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"{path}: unsupported document type {path.suffix or '(none)'}; "
                         f"use one of {', '.join(sorted(SUFFIXES))}")
    try:
        size = path.stat().st_size
        if kind != "jsonl":
            _check_size(str(path), size, limit)
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    text = _decode(path, data)
    if kind == "jsonl":
        docs = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError(f"{path}:{n}: not valid JSON ({e.msg})") from None
            docs.append(doc_from_record(rec, f"{path}:{n}", limit))
        if not docs:
            raise InputError(f"{path}: no documents in this JSON Lines file")
        return docs
    title = ""
    if kind == "html":
        title, text = html_to_text(text)
    elif kind == "markdown":
        for line in text.splitlines():
            if line.startswith("#"):
                title = line.lstrip("#").strip()
                break
    if not text.strip():
        raise InputError(f"{path}: the document is empty")
    return [SourceDocument(path.stem, text, None, title or path.stem, str(path))]


def read_documents(paths: Iterable[str | Path], limit: int) -> list[SourceDocument]:
    """All documents under ``paths`` (folders are walked), read completely before returning."""
    out: list[SourceDocument] = []
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES)
            if not files:
                raise InputError(f"{p}: no .txt, .md, .html or .jsonl files in this folder")
            for f in files:
                out.extend(read_path(f, limit))
        elif p.exists():
            out.extend(read_path(p, limit))
        else:
            raise InputError(f"{p}: no such file or folder")
    seen: dict[str, str] = {}
    for d in out:
        if d.id in seen:
            raise InputError(f"document id {d.id!r} appears twice ({seen[d.id]} and {d.source})")
        seen[d.id] = d.source
    return out


def iter_paragraphs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each paragraph (blank-line separated), whitespace-trimmed."""
    pos = 0
    n = len(text)
    while pos < n:
        nxt = text.find("\n\n", pos)
        end = n if nxt == -1 else nxt
        s, e = pos, end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            yield s, e
        pos = end + 2 if nxt != -1 else n
