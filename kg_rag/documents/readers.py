"""Read documents from files and folders: plain text, Markdown, HTML, JSON Lines; PDF and DOCX
with the ``documents`` extra (:mod:`.office`).

Every problem is an :class:`InputError` naming the file (and line for JSON Lines), raised before
anything is written: binary files, undecodable text, documents over the size limit, bad JSON
(also JSON nested deeper than :data:`MAX_JSON_DEPTH`, a string with a lone surrogate escape such
as ``"\\ud800"``, which is no Unicode character, and a field of the wrong type).
In a folder, a bad or unsupported file can instead be reported and skipped (``skipped``), so
that one PDF or one empty file does not stop the other files from being indexed.

A file's document id is its path relative to the folder that was given, without the suffix
(``a/notes.txt`` → ``a/notes``; a file given by itself: its stem), so two ``notes.txt`` in two
subfolders are two documents, never one replacing the other. The source recorded with a
document (``dct:source``) is that relative path too (``corpus.jsonl:29``), never the indexing
machine's absolute path, which the SPARQL endpoint would show to anyone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from kg_rag.errors import ConfigError, InputError
from kg_rag.text.normalise import nfc

SUFFIXES = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown",
            ".html": "html", ".htm": "html", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".pdf": "pdf", ".docx": "docx"}
#: arrays and objects nested deeper than this in a JSON record (or a JSON request body) are refused
MAX_JSON_DEPTH = 64
#: what a JSON text nested deeper than :data:`MAX_JSON_DEPTH` is told
TOO_DEEP = f"the JSON nests arrays and objects deeper than {MAX_JSON_DEPTH} levels"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: formats whose files are not text: the size limit applies to the text read from them, and to
#: the file at this many times it
BINARY = {"pdf": 20, "docx": 20}


@dataclass(frozen=True, slots=True)
class SourceDocument:
    id: str
    text: str
    lang: str | None = None
    title: str = ""
    source: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: the opaque key of the folder or file it was read from (:func:`root_key`; "" when not read
    #: from one), recorded so that re-indexing that folder or file finds the documents gone
    root: str = ""


def root_key(path: Path) -> str:
    """An opaque key of the folder or file ``path``: the first 16 hex digits of the SHA-256 of
    its absolute path (the path itself is never recorded)."""
    import hashlib

    return hashlib.sha256(str(path.resolve()).encode("utf-8")).hexdigest()[:16]


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


def _decode(name: str, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise InputError(f"{name}: looks like a binary file, not text; give .txt, .md, .html or .jsonl")
    try:
        return nfc(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: not valid UTF-8 (byte {e.start}); convert it to UTF-8 first") from None


def json_flaw(value: Any, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """What makes a parsed JSON value unfit as input, or None: arrays and objects nested deeper
    than ``max_depth`` (:data:`TOO_DEEP`), or a string or key holding a lone surrogate escape
    (``"\\ud800"``: valid JSON syntax, but no Unicode character, so it cannot be encoded, stored
    or shown), named by where it is (``'title'``, ``'documents[0].title'``, ``'[2]'``)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, at = stack.pop()
        if len(at) >= max_depth and isinstance(item, (dict, list)):
            return TOO_DEEP
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return _surrogate_message(at, item)
        elif isinstance(item, dict):
            for k, v in item.items():
                if _SURROGATE.search(k):
                    return _surrogate_message(at, k, key=True)
                stack.append((v, (*at, k)))
        elif isinstance(item, list):
            stack.extend((v, (*at, i)) for i, v in enumerate(item))
    return None


def _surrogate_message(at: tuple[str | int, ...], text: str, key: bool = False) -> str:
    found = _SURROGATE.search(text)
    code = f"\\u{ord(found.group()):04x}" if found else "?"
    where = _json_place(at)
    what = (f"a key of {where}" if at else "a key") if key else (where if at else "the JSON text")
    return (f"{what} holds a lone surrogate escape ({code}), which is no Unicode character: "
            f"send the text as UTF-8, or a character beyond U+FFFF as a surrogate pair")


def _json_place(at: tuple[str | int, ...]) -> str:
    """``('documents', 0, 'title')`` → ``'documents[0].title'`` (keys shown ASCII-safe)."""
    out = ""
    for part in at:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier() and part.isascii():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=True)}]"
    return f"'{out}'"


def load_json(data: str | bytes, where: str = "") -> Any:
    """A JSON text (a JSON Lines record, a request body) as a value fit as input, or one
    InputError starting with ``where`` (when given): not JSON, nested deeper than
    :data:`MAX_JSON_DEPTH` (the parser would otherwise run out of stack), or holding a lone
    surrogate escape (:func:`json_flaw`)."""
    at = f"{where}: " if where else ""
    try:
        value = json.loads(data)
    except RecursionError:
        raise InputError(f"{at}{TOO_DEEP}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{at}not valid JSON ({e.msg})") from None
    except ValueError as e:   # bytes that are not UTF-8
        raise InputError(f"{at}not valid JSON ({e})") from None
    flaw = json_flaw(value)
    if flaw:
        raise InputError(f"{at}{flaw}")
    return value


def _check_size(name: str, size: int, limit: int) -> None:
    if size > limit:
        raise InputError(f"{name}: {size} bytes is over the limit of {limit} bytes "
                         f"(set KG_RAG_MAX_DOCUMENT_BYTES to raise it)")


def doc_from_record(rec: Any, where: str, limit: int, strict: bool = False) -> SourceDocument:
    """One JSON object {"id", "text", "lang"?, "title"?, "metadata"?} → SourceDocument.

    "metadata" must be an object. A JSON Lines record may have a number as its id or title (read
    as text); ``strict`` (the REST API's JSON body, whose schema declares them strings) refuses
    anything but a string for "id", "title" and "lang". Strings are expected checked by
    :func:`json_flaw` (no lone surrogates)."""
    if not isinstance(rec, dict):
        raise InputError(f"{where}: expected a JSON object with id and text")
    doc_id = rec.get("id", rec.get("_id"))
    text = rec.get("text")
    loose: dict[str, tuple[type, ...]] = {"id": (str, int), "title": (str, int, float), "lang": (str,)}
    for name, value in (("id", doc_id), ("title", rec.get("title")), ("lang", rec.get("lang"))):
        allowed = (str,) if strict else loose[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, allowed)):
            raise InputError(f"{where}: \"{name}\" must be a string")
    if not isinstance(doc_id, (str, int)) or str(doc_id).strip() == "":
        raise InputError(f"{where}: missing or empty \"id\"")
    if not isinstance(text, str):
        raise InputError(f"{where}: missing \"text\" (a string)")
    raw_meta = rec.get("metadata")
    if raw_meta is not None and not isinstance(raw_meta, dict):
        raise InputError(f"{where}: \"metadata\" must be an object")
    meta: dict[str, Any] = raw_meta or {}
    _check_size(where, len(text.encode("utf-8")), limit)
    lang = rec.get("lang") or meta.get("lang")
    title = rec.get("title") or ""
    return SourceDocument(str(doc_id).strip(), nfc(text), lang or None, nfc(str(title)), where, meta)


def read_path(path: Path, limit: int, ident: str | None = None,
              source: str | None = None, name: str | None = None) -> list[SourceDocument]:
    """The documents of one file: ``ident`` is the id of a non-JSON-Lines file (default: its
    stem), ``source`` what is recorded as where it came from (default: its name), ``name`` what
    error messages call it (default: its path; the service gives an upload's own file name, never
    the temporary file's path)."""
    ident = path.stem if ident is None else ident
    source = path.name if source is None else source
    shown = str(path) if name is None else name
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(f"{shown}: unsupported document type {path.suffix or '(none)'}; "
                         f"use one of {', '.join(sorted(SUFFIXES))}")
    try:
        size = path.stat().st_size
        if kind in BINARY:
            _check_size(shown, size, limit * BINARY[kind])
        elif kind != "jsonl":
            _check_size(shown, size, limit)
        data = b"" if kind in BINARY else path.read_bytes()
    except OSError as e:
        raise InputError(f"{shown}: cannot read ({e.strerror})") from None
    if kind in BINARY:
        from kg_rag.documents.office import docx_text, pdf_text

        title, text, meta = (pdf_text if kind == "pdf" else docx_text)(path, shown)
        if not text.strip():
            raise InputError(f"{shown}: no text in this {kind.upper()} file (a scan needs OCR first)")
        _check_size(shown, len(text.encode("utf-8")), limit)
        return [SourceDocument(ident, text, None, title or path.stem, source, meta)]
    text = _decode(shown, data)
    if kind == "jsonl":
        docs = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            rec = load_json(line, f"{shown}:{n}")
            docs.append(replace(doc_from_record(rec, f"{shown}:{n}", limit), source=f"{source}:{n}"))
        if not docs:
            raise InputError(f"{shown}: no documents in this JSON Lines file")
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
        raise InputError(f"{shown}: the document is empty")
    return [SourceDocument(ident, text, None, title or path.stem, source)]


def read_documents(paths: Iterable[str | Path], limit: int,
                   skipped: list[str] | None = None) -> list[SourceDocument]:
    """All documents under ``paths`` (folders are walked), read completely before returning.

    ``skipped``: when given, a file in a folder that cannot be read as a document (binary, empty,
    not UTF-8, over the limit, bad JSON, an unsupported type such as .pdf) is not an error: its
    one-line reason is appended and the other files are read. A file named by itself, and a
    folder with no document at all, stay errors."""
    out: list[SourceDocument] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not _hidden(f.relative_to(p)))
            files = [f for f in found if f.suffix.lower() in SUFFIXES]
            if skipped is not None:
                skipped.extend(f"{f}: unsupported document type {f.suffix or '(none)'}; skipped"
                               for f in found if f.suffix.lower() not in SUFFIXES)
            if not files:
                raise InputError(f"{p}: no .txt, .md, .html, .jsonl, .pdf or .docx files in this folder")
            before = len(out)
            root = root_key(p)
            for f in files:
                rel = f.relative_to(p)
                try:
                    out.extend(replace(d, root=root) for d in
                               read_path(f, limit, rel.with_suffix("").as_posix(), rel.as_posix()))
                except (InputError, ConfigError) as e:   # ConfigError: the extra is missing
                    if skipped is None:
                        raise
                    skipped.append(str(e))
            if len(out) == before:
                reasons = skipped or ["?"]
                raise InputError(f"{p}: no file in this folder could be read as a document "
                                 f"({len(reasons)} skipped; the first: {reasons[0]})")
        elif p.exists():
            root = root_key(p)
            out.extend(replace(d, root=root) for d in read_path(p, limit))
        else:
            raise InputError(f"{p}: no such file or folder")
    return check_unique_ids(out)


def check_unique_ids(docs: list[SourceDocument]) -> list[SourceDocument]:
    """``docs``, or an InputError naming an id that two of them have (and where each came from)."""
    seen: dict[str, str] = {}
    for d in docs:
        if d.id in seen:
            raise InputError(f"document id {d.id!r} appears twice ({seen[d.id]} and {d.source})")
        seen[d.id] = d.source
    return docs


def _hidden(rel: Path) -> bool:
    """A dot file or a file in a dot folder (``.git``, ``.DS_Store``): not a document."""
    return any(part.startswith(".") for part in rel.parts)


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
