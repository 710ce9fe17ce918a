"""What every format parser hands to :func:`loaders.load_file`, and shared input helpers."""

from __future__ import annotations

import gzip
import io
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, TextIO, cast
from xml.parsers import expat

from pyoxigraph import Quad

from kg_rag.errors import LoadError
from kg_rag.settings import Settings, settings


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
    """N-Triples lines written to a temporary file, for sources too large for term objects — or
    to ``stream`` (a text stream the caller owns, e.g. a pipe to the store's bulk loader:
    :func:`loaders.load_file` streams a new source's triples while it is still being mapped).

    (Building a ``pyoxigraph.Quad`` costs 3–5 µs in Python; a text line costs 0.3 µs and the
    store's bulk loader parses it in Rust.)
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.path: Path | None
        if stream is None:
            fd, name = tempfile.mkstemp(prefix="kg-rag-load-", suffix=".nt")
            self.path = Path(name)
            self._file: TextIO = os.fdopen(fd, "w", encoding="utf-8")
        else:
            self.path = None
            self._file = stream
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

    def close(self) -> Path | None:
        """Write what is buffered; close the spool file (a caller's stream stays open)."""
        self._flush()
        if self.path is not None:
            self._file.close()
        else:
            self._file.flush()
        return self.path

    def abort(self) -> None:
        if self.path is not None:
            self._file.close()
            self.path.unlink(missing_ok=True)


# --- limits on what one source file may make the loader read ------------------------------------
@dataclass(frozen=True, slots=True)
class Limits:
    """Caps on one source file (``Settings.load_max_*``); a file over one is refused with a
    :class:`LoadError` naming the limit, while it is read and before the store is touched."""

    max_bytes: int = 1_000_000_000      # bytes once decompressed
    max_elements: int = 10_000_000      # XML elements (WN-LMF, DMLex XML)
    max_text: int = 100_000             # characters of one XML text or attribute value
    max_depth: int = 100                # XML nesting

    @classmethod
    def of(cls, cfg: Settings) -> Limits:
        return cls(cfg.load_max_bytes, cfg.load_max_elements, cfg.load_max_text,
                   cfg.load_max_depth)


_LIMITS: ContextVar[Limits | None] = ContextVar("kg_rag_load_limits", default=None)


def limits() -> Limits:
    """The limits of the load in progress (:func:`using_limits`), else the process settings'."""
    return _LIMITS.get() or Limits.of(settings())


@contextmanager
def using_limits(lim: Limits | None) -> Iterator[None]:
    """Parse under ``lim`` (None: the process settings')."""
    token = _LIMITS.set(lim)
    try:
        yield
    finally:
        _LIMITS.reset(token)


def over_limit(path: Path, what: str, setting: str, where: str = "") -> LoadError:
    """``what``: the limit passed, e.g. "more than 1,000 bytes"; ``where``: ":line" or ""."""
    return LoadError(f"{path}{where}: refused: {what} (the limit KG_RAG_{setting.upper()}); "
                     f"nothing was loaded; raise the limit if the file is genuine")


class CappedReader:
    """A binary stream that refuses to deliver more than ``max_bytes`` (a gzip bomb stops here
    as it expands, before it fills memory)."""

    def __init__(self, raw: BinaryIO, path: Path, max_bytes: int, compressed: bool) -> None:
        self._raw, self._path, self._max = raw, path, max_bytes
        self.compressed = compressed
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            chunks = []
            while block := self.read(1 << 20):
                chunks.append(block)
            return b"".join(chunks)
        data = self._raw.read(min(size, self._max + 1 - self.count) if size else 0)
        self.count += len(data)
        if self.count > self._max:
            self.close()
            raise self.too_large()
        return data

    def too_large(self) -> LoadError:
        what = f"more than {self._max:,} bytes" + (" once decompressed" if self.compressed else "")
        return over_limit(self._path, what, "load_max_bytes")

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> CappedReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_binary(path: Path) -> CappedReader:
    """The file's bytes, gunzipped transparently when it is gzip (by magic number), refused
    past :attr:`Limits.max_bytes` of the load in progress."""
    max_bytes = limits().max_bytes
    try:
        f: BinaryIO = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except FileNotFoundError:
        raise LoadError(f"{path}: no such file") from None
    except OSError as e:
        raise LoadError(f"{path}: cannot read: {e.strerror or e}") from None
    if f.read(2) == b"\x1f\x8b":
        f.seek(0)
        return CappedReader(gzip.GzipFile(fileobj=f, mode="rb"), path,  # type: ignore[arg-type]
                            max_bytes, compressed=True)
    f.seek(0)
    reader = CappedReader(f, path, max_bytes, compressed=False)
    if os.fstat(f.fileno()).st_size > max_bytes:
        reader.close()
        raise reader.too_large()
    return reader


def read_all(path: Path) -> bytes:
    """The whole (gunzipped) file; a truncated or corrupt gzip stream is a :class:`LoadError`.
    A compressed file is measured once before it is kept in memory: a file over the size limit
    is refused without ever holding it."""
    try:
        with open_binary(path) as f:
            if f.compressed:
                while f.read(1 << 20):
                    pass
        with open_binary(path) as f:
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


# --- XML read as it streams (expat) ----------------------------------------------------------------
class XmlLimitExceeded(Exception):
    """Raised inside an expat callback; the reader turns it into :func:`over_limit` with the line."""

    def __init__(self, what: str, setting: str) -> None:
        super().__init__(what)
        self.what, self.setting = what, setting


class XmlCaps:
    """Counts the elements, nesting and text an expat parse delivers and stops it past
    :class:`Limits`; :meth:`install` puts it in front of a reader's handlers."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.elements = self.depth = self.text = 0

    def install(self, p: expat.XMLParserType) -> None:
        """Wrap the start, end and character handlers already set on ``p``."""
        # the readers' start handlers take (tag, attributes as a dict): expat's default
        start = cast("Callable[[str, dict[str, str]], object] | None", p.StartElementHandler)
        end, chars = p.EndElementHandler, p.CharacterDataHandler
        lim = self.lim
        max_elements, max_depth, max_text = lim.max_elements, lim.max_depth, lim.max_text

        def on_start(tag: str, attrs: dict[str, str]) -> None:
            self.elements += 1
            self.depth += 1
            self.text = 0
            if self.elements > max_elements:
                raise XmlLimitExceeded(f"more than {max_elements:,} XML elements",
                                       "load_max_elements")
            if self.depth > max_depth:
                raise XmlLimitExceeded(f"XML nested more than {max_depth:,} elements deep",
                                       "load_max_depth")
            for value in attrs.values():
                if len(value) > max_text:
                    raise XmlLimitExceeded(f"an attribute value of more than {max_text:,} "
                                           f"characters", "load_max_text")
            if start is not None:
                start(tag, attrs)

        def on_end(tag: str) -> None:
            self.depth -= 1
            self.text = 0
            if end is not None:
                end(tag)

        def on_chars(data: str) -> None:
            self.text += len(data)
            if self.text > max_text:
                raise XmlLimitExceeded(f"a text of more than {max_text:,} characters",
                                       "load_max_text")
            if chars is not None:
                chars(data)

        p.StartElementHandler = on_start
        p.EndElementHandler = on_end
        p.CharacterDataHandler = on_chars
