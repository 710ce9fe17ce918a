"""Files shipped with kg-rag: ``sparql/``, ``ontology/``, ``demo/``.

In the source tree they sit beside the package; in an installed wheel they are packaged as
``kg_rag/_resources/<name>``. Both are found through :mod:`importlib.resources`.
"""

from __future__ import annotations

from importlib import resources
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
