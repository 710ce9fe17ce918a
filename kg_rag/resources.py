"""Files shipped with kg-rag: ``sparql/``, ``ontology/``, ``demo/``; and a digest of a package's
files (:func:`code_digest`), which keys what their code computes.

In the source tree they sit beside the package; in an installed wheel they are packaged as
``kg_rag/_resources/<name>``. Both are found through :mod:`importlib.resources`.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path

from kg_rag.errors import KgRagError

_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Traversable:
    """The folder of shipped files called ``name`` (``sparql``, ``ontology``, ``demo``)."""
    packaged = resources.files("kg_rag").joinpath("_resources", name)
    if packaged.is_dir():
        return packaged
    source = _SOURCE_ROOT / name
    if source.is_dir():
        return source
    raise KgRagError(f"kg-rag is installed without its {name}/ files; reinstall the package")


def resource_path(name: str) -> Path:
    """A real filesystem path for ``name`` (wheels are unpacked, so this holds for both)."""
    return Path(str(resource_dir(name)))


def _files(root: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for entry in root.iterdir():
        name = prefix + entry.name
        if entry.is_dir():
            if entry.name != "__pycache__":
                out += _files(entry, name + "/")
        elif not entry.name.endswith((".pyc", ".pyo")):
            out.append((name, entry))
    return out


@lru_cache(maxsize=8)
def code_digest(packages: tuple[str, ...]) -> str:
    """sha256 of every file of ``packages`` (sources and data, e.g. stop-word lists) and the
    lemmatiser's version: what a result computed by that code is keyed by (the knowledge
    selector's agent version, the gloss words kept between processes), so that any edit there —
    a comment too — gives a new key."""
    h = hashlib.sha256()
    for package in packages:
        for name, f in sorted(_files(resources.files(package)), key=lambda x: x[0]):
            h.update(f"{package}/{name}\x1f".encode() + f.read_bytes() + b"\x1e")
    h.update(metadata.version("simplemma").encode())
    return h.hexdigest()
