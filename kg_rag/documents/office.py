"""Text of PDF and DOCX files, with the ``documents`` extra (pypdf, python-docx).

A PDF's pages and a DOCX's paragraphs become the document's paragraphs (passages are split at
blank lines): each PDF page starts a paragraph, its lines kept on single newlines, and the
offset at which each page starts is kept in the document's metadata (``pages``), so a mention's
offset tells its page. A DOCX's paragraphs (tables' cells included, row by row) are one
paragraph each. Without the extra, reading one is a :class:`~kg_rag.errors.ConfigError` naming
it; a damaged or encrypted file an :class:`~kg_rag.errors.InputError` naming the file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

from kg_rag.errors import ConfigError, InputError
from kg_rag.text.normalise import nfc

_EXTRA = "install the 'documents' extra from the kg-rag source folder with pip install '.[documents]'"


def _missing(what: str, module: str) -> ConfigError:
    return ConfigError(f"reading {what} files needs {module}: {_EXTRA}")


def _clean(line: str) -> str:
    return " ".join(line.split())


def pdf_text(path: Path, name: str | None = None) -> tuple[str, str, dict[str, Any]]:
    """(title, text, metadata with the page start offsets) of a PDF; ``name``: what errors call
    the file (default its path)."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:
        raise _missing(".pdf", "pypdf") from None
    try:
        reader = PdfReader(path)
        if reader.is_encrypted:
            raise InputError(f"{name or path}: the PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta = reader.metadata
        title = _clean(str(meta.title)) if meta is not None and meta.title else ""
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as e:
        raise InputError(f"{name or path}: not a readable PDF ({_clean(str(e))[:120] or type(e).__name__})") from None
    parts: list[str] = []
    starts: list[int] = []   # where each page starts in the text (an empty page: where the next would)
    pos = 0
    for text in pages:
        block = "\n".join(x for x in (_clean(line) for line in nfc(text).splitlines()) if x)
        if parts and block:
            pos += 2         # the blank line between pages
        starts.append(pos)
        if block:
            parts.append(block)
            pos += len(block)
    return title, "\n\n".join(parts), {"pages": starts}


def docx_text(path: Path, name: str | None = None) -> tuple[str, str, dict[str, Any]]:
    """(title, text, metadata) of a DOCX: its paragraphs, then its tables' rows."""
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError:
        raise _missing(".docx", "python-docx") from None
    try:
        d = docx.Document(str(path))
        paras = [_clean(p.text) for p in d.paragraphs]
        for table in d.tables:
            for row in table.rows:
                paras.append(" | ".join(_clean(c.text) for c in row.cells))
        title = _clean(d.core_properties.title or "")
        if not title:
            title = next((_clean(p.text) for p in d.paragraphs
                          if p.style is not None and (p.style.name or "").startswith(("Title", "Heading"))
                          and p.text.strip()), "")
    except PackageNotFoundError:
        raise InputError(f"{name or path}: not a readable DOCX file (not a Word document package)") from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise InputError(f"{name or path}: not a readable DOCX file ({_clean(str(e))[:120] or type(e).__name__})") from None
    return title, nfc("\n\n".join(p for p in paras if p.strip(" |"))), {}
