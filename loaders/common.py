"""What every format parser hands to :func:`loaders.load_file`, and shared input helpers."""

from __future__ import annotations

import gzip
import io
import os
import re
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pyoxigraph import Quad

from kg_rag.errors import LoadError


@dataclass(slots=True)
class Parsed:
    """A whole source, parsed and mapped, not yet written."""

    kind: str                      # catalog kgr:sourceKind: skos | ontolex | wn-lmf | rdf
    media_type: str                # catalog dct:format
    quads: list[Quad] = field(default_factory=list)
    ntriples: Path | None = None   # large sources: spooled N-Triples (quads is then empty)
    triples: int = 0
    concepts: int = 0
    entries: int = 0
    senses: int = 0
    entities: int = 0              # distinct IRI subjects
    languages: set[str] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)  # what is loaded but looks wrong (SKOS integrity)

    def discard(self) -> None:
        """Remove the spool file, if any."""
        if self.ntriples is not None:
            self.ntriples.unlink(missing_ok=True)
            self.ntriples = None


_NT_ESCAPE = re.compile(r'[\\"\n\r]')
_NT_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}


def nt_iri(value: str) -> str:
    """N-Triples text of an IRI that the caller built from safe segments."""
    return f"<{value}>"


def nt_literal(text: str, lang: str = "") -> str:
    """N-Triples text of a string literal (language-tagged when ``lang``)."""
    if _NT_ESCAPE.search(text):
        text = _NT_ESCAPE.sub(lambda m: _NT_ESCAPES[m.group(0)], text)
    return f'"{text}"@{lang}' if lang else f'"{text}"'


def nt_integer(n: int) -> str:
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


class Spool:
    """N-Triples lines written to a temporary file, for sources too large for term objects.

    (Building a ``pyoxigraph.Quad`` costs 3–5 µs in Python; a text line costs 0.3 µs and the
    store's bulk loader parses it in Rust.)
    """

    def __init__(self) -> None:
        fd, name = tempfile.mkstemp(prefix="kg-rag-load-", suffix=".nt")
        self.path = Path(name)
        self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._buf: list[str] = []
        self.count = 0

    def add(self, s: str, p: str, o: str) -> None:
        self._buf.append(f"{s} {p} {o} .\n")
        if len(self._buf) >= 65536:
            self._flush()

    @property
    def pending(self) -> int:
        """Lines written or buffered so far."""
        return self.count + len(self._buf)

    def _flush(self) -> None:
        self.count += len(self._buf)
        self._file.write("".join(self._buf))
        self._buf.clear()

    def close(self) -> Path:
        self._flush()
        self._file.close()
        return self.path

    def abort(self) -> None:
        self._file.close()
        self.path.unlink(missing_ok=True)


def open_binary(path: Path) -> BinaryIO:
    """The file's bytes, gunzipped transparently when it is gzip (by magic number)."""
    try:
        f: BinaryIO = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except OSError as e:
        raise LoadError(f"{path}: cannot read: {e.strerror or e}") from None
    if f.read(2) == b"\x1f\x8b":
        f.seek(0)
        return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    f.seek(0)
    return f


def read_all(path: Path) -> bytes:
    """The whole (gunzipped) file; a truncated or corrupt gzip stream is a :class:`LoadError`."""
    with open_binary(path) as f:
        try:
            return f.read()
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise LoadError(f"{path}: truncated or corrupt gzip data ({e}); fetch the file again") from None


def peek(path: Path, size: int = 65536) -> bytes:
    """The first ``size`` (gunzipped) bytes, for format detection."""
    with open_binary(path) as f:
        try:
            return f.read(size)
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise LoadError(f"{path}: truncated or corrupt gzip data ({e}); fetch the file again") from None


def text_stream(raw: BinaryIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding="utf-8")
