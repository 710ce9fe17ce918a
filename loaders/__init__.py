"""Loaders: vocabulary files → RDF in the store, one named graph per source plus a catalog record.

Formats: SKOS (also SKOS-XL) and OntoLex-Lemon in any RDF syntax pyoxigraph reads (Turtle,
RDF/XML, N-Triples, N-Quads, TriG, JSON-LD; gzip transparently), WordNet LMF XML, OASIS DMLex
XML and JSON (:mod:`loaders.dmlex`), and WordNet sense frequencies (``cntlist.rev``,
:mod:`loaders.cntlist`).
A file is parsed and mapped completely before anything is written, so a malformed file leaves
the store as it was — except a WordNet LMF file of a source not loaded yet, which is written as
it is mapped (:mod:`loaders.streaming`) and dropped again if it turns out malformed.

    load_file(store, path) -> LoadReport       # replaces the source if it was loaded before
    check_targets(paths) -> [graph]            # several files, checked together before a load
    drop_source(store, graph_iri)
    list_sources(store) -> [SourceRecord]
    resolve_source(store, name) -> SourceRecord   # by graph IRI or file name
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph
from pyoxigraph import NamedNode

from kg_rag.errors import LoadError, StoreError
from kg_rag.namespaces import ID
from kg_rag.store import Store
from loaders import cntlist, dmlex, omwtab, rdf, wnlmf
from loaders.catalog import (
    SourceRecord,
    drop_source,
    list_sources,
    now,
    resolve_source,
    write_record,
)
from loaders.common import Limits, Parsed, peek, using_limits
from loaders.iris import source_graph_iri
from loaders.streaming import stream_into

log = logging.getLogger(__name__)

#: sources up to this many triples are written in one transaction; larger ones are bulk-loaded
SMALL = 200_000

#: version of each kind's mapping to RDF, recorded with every source; bump it when a loader starts
#: keeping something new, so that sources loaded before show as stale (`kg-rag sources`) and
#: `make eval` reloads them. wn-lmf 2: verb subcategorisation frames.
MAPPING_VERSIONS = {"wn-lmf": 2}


def mapping_version(kind: str) -> int:
    return MAPPING_VERSIONS.get(kind, 1)


def stale(record: SourceRecord) -> bool:
    """Loaded under an older mapping than this loader's: lacks what the loader now keeps."""
    return record.mapping < mapping_version(record.kind)
#: graphs kg-rag writes itself; a source may not be loaded into them
_RESERVED = tuple(f"{ID}{part}/" for part in ("graph", "doc", "question", "decision", "ann"))
#: what ``--format`` accepts
FORMATS = ("auto", "turtle", "rdfxml", "ntriples", "nquads", "trig", "jsonld", "wn-lmf",
           "ontolex", "skos", "cntlist", "dmlex", "omw-tab")


@dataclass(frozen=True, slots=True)
class LoadReport:
    graph: str
    path: str
    kind: str
    triples: int
    concepts: int
    entries: int
    senses: int
    languages: tuple[str, ...]
    seconds: float
    warnings: tuple[str, ...] = ()   # loaded, but looks wrong (loaders.skos_checks)


def detect_format(path: Path, fmt: str = "auto") -> str:
    """The syntax of ``path``: ``wn-lmf``, ``cntlist``, ``dmlex-xml``, ``dmlex-json`` or an RDF
    syntax name (see :data:`rdf.SYNTAXES`)."""
    if fmt not in FORMATS:
        raise LoadError(f"{path}: unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "dmlex":
        found = dmlex.syntax_from_name(path) or dmlex.sniff(peek(path, 4096))
        if found is None:
            raise LoadError(f"{path}: --format dmlex, but the file starts neither with a "
                            f"<lexicographicResource> element nor with a JSON object")
        return found
    if fmt not in ("auto", "ontolex", "skos"):
        return fmt
    if fmt == "auto" and cntlist.is_cntlist(path):
        return "cntlist"
    if fmt == "auto" and omwtab.is_omw_tab(path, peek(path, 4096)):
        return "omw-tab"
    if fmt == "auto" and (found := dmlex.syntax_from_name(path)) is not None:
        return found
    syntax = rdf.syntax_from_name(path)
    if syntax in (None, "rdfxml", "jsonld"):
        head = peek(path, 4096)
        if syntax != "jsonld" and wnlmf.is_lmf(head):
            return "wn-lmf"
        if fmt == "auto" and (found := dmlex.sniff(head)) is not None:
            return found
        if syntax is None:
            syntax = rdf.sniff(head)
    if syntax is None:
        raise LoadError(f"{path}: cannot tell the format from the file name or content; "
                        f"give --format ({', '.join(FORMATS[1:])})")
    return syntax


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parse_file(path: Path, fmt: str = "auto", graph: str | None = None,
               progress: Callable[[int], None] | None = None,
               limits: Limits | None = None) -> tuple[NamedNode, Parsed]:
    """Parse and map ``path`` completely (nothing written), under ``limits`` (None: those of
    the process settings, ``KG_RAG_LOAD_MAX_*``)."""
    with using_limits(limits):
        return _parse_file(path, fmt, graph, progress)


def _target(path: Path, fmt: str, graph: str | None) -> tuple[NamedNode, str]:
    """The graph ``path`` goes into and its syntax (LoadError for a bad file or graph)."""
    if not path.is_file():
        raise LoadError(f"{path}: no such file")
    if graph is not None and graph.startswith(_RESERVED):
        raise LoadError(f"{path}: the graph {graph} belongs to kg-rag (catalog, decisions, "
                        f"documents); choose another --graph")
    syntax = detect_format(path, fmt)
    try:
        g = NamedNode(graph or source_graph_iri(path))
    except ValueError:
        raise LoadError(f"{path}: --graph {graph!r} is not an absolute IRI") from None
    return g, syntax


def check_targets(paths: Iterable[Path | str], fmt: str = "auto",
                  graph: str | None = None) -> list[NamedNode]:
    """The graph each of ``paths`` would be loaded into, all checked before anything is written
    (a missing file, an unknown format, a bad ``graph``: :class:`LoadError`). Two different files
    that would go into one graph (``a/t.ttl`` and ``b/t.ttl``; ``ok.dmlex.xml`` and
    ``ok.dmlex.json``: one file stem) are refused, as the second would replace the first; the
    same file twice is one source loaded again."""
    targets: list[NamedNode] = []
    first: dict[NamedNode, Path] = {}
    for p in paths:
        path = Path(p).expanduser().resolve()
        g, _ = _target(path, fmt, graph)
        other = first.setdefault(g, path)
        if other != path and not _same_file(other, path):
            raise LoadError(f"{other} and {path} would both be loaded into the graph <{g.value}>, "
                            f"the second replacing the first; load them separately, one of them "
                            f"with --graph IRI")
        targets.append(g)
    return targets


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _parse_file(path: Path, fmt: str, graph: str | None,
                progress: Callable[[int], None] | None) -> tuple[NamedNode, Parsed]:
    g, syntax = _target(path, fmt, graph)
    if syntax == "wn-lmf":
        return g, wnlmf.parse(path, progress)
    if syntax == "cntlist":
        return g, cntlist.parse(path, g)
    if syntax == "omw-tab":
        return g, omwtab.parse(path, progress)
    if syntax in dmlex.MEDIA_TYPES:
        return g, dmlex.parse(path, syntax, g)
    return g, rdf.parse(path, syntax, g, pipeline=fmt if fmt in ("ontolex", "skos") else "auto")


def load_file(store: Store, path: Path | str, fmt: str = "auto", graph: str | None = None,
              progress: Callable[[int], None] | None = None,
              limits: Limits | None = None) -> LoadReport:
    """Load one source file into its named graph (replacing it) and record it in the catalog.

    ``progress`` is called with numbers of triples: as they are mapped (WordNet LMF, whose
    bulk load then reports nothing) or as they are written (RDF files). A file over one of
    ``limits`` (:class:`Limits`; None: the settings') is refused and the store left as it was
    (a new WordNet is written while it is mapped, :mod:`loaders.streaming`, and dropped again
    when it fails; every other source is mapped completely first)."""
    path = Path(path).expanduser().resolve()
    start = time.monotonic()
    with using_limits(limits):
        g, syntax = _target(path, fmt, graph)
        if syntax == "wn-lmf" and g not in store.named_graphs():
            # a new WordNet: loaded while it is mapped (loaders.streaming)
            try:
                parsed = stream_into(store, g, path, wnlmf.parse, progress)
            except (OSError, SyntaxError, RuntimeError) as e:
                raise _write_failed(path, g, e) from None
            n = parsed.triples
            sha = _sha256(path)
        else:
            g, parsed = parse_file(path, fmt, graph, progress, limits)
            n, sha = _write(store, g, path, parsed, progress)
    languages = tuple(sorted(lang for lang in parsed.languages if lang))
    write_record(store, SourceRecord(
        graph=g.value, title=path.name, source=path.name, kind=parsed.kind,
        media_type=parsed.media_type, sha256=sha, loaded_at=now(), triples=n,
        entities=parsed.entities, languages=languages, mapping=mapping_version(parsed.kind),
    ))
    seconds = time.monotonic() - start
    log.info("loaded %s into %s: %d triples in %.1f s", path, g.value, n, seconds)
    for w in parsed.warnings:
        log.info("%s: warning: %s", path.name, w)
    return LoadReport(graph=g.value, path=str(path), kind=parsed.kind, triples=n,
                      concepts=parsed.concepts, entries=parsed.entries, senses=parsed.senses,
                      languages=languages, seconds=round(seconds, 3),
                      warnings=tuple(parsed.warnings))


def _write(store: Store, g: NamedNode, path: Path, parsed: Parsed,
           progress: Callable[[int], None] | None) -> tuple[int, str]:
    """Write a source mapped completely (replacing its graph); (statements, sha256 of the file)."""
    try:
        sha = _sha256(path)
        try:
            if parsed.ntriples is not None and parsed.triples > SMALL:
                n = store.load_ntriples(g, str(parsed.ntriples))
            elif parsed.ntriples is not None:  # small: one transaction replaces the graph
                spooled = pyoxigraph.parse(path=str(parsed.ntriples), format=pyoxigraph.RdfFormat.N_TRIPLES)
                n = store.load_graph(g, spooled)
            else:
                n = store.load_graph(g, parsed.quads, progress)
        except (OSError, SyntaxError, ValueError) as e:
            raise _write_failed(path, g, e) from None
    finally:
        parsed.discard()
    return n, sha


def _write_failed(path: Path, g: NamedNode, e: BaseException) -> StoreError:
    """An engine error while writing ``path`` (the store has removed the graph again)."""
    return StoreError(f"loading {path} into the store failed, the graph {g.value} was removed "
                      f"again: {e}")


__all__ = ["FORMATS", "MAPPING_VERSIONS", "Limits", "LoadReport", "check_targets", "detect_format", "drop_source",
           "list_sources",
           "resolve_source",
           "load_file", "mapping_version", "stale",
           "parse_file"]
