"""Which ``kg-rag serve`` holds an embedded store: the service announces its SPARQL endpoint in
the store folder (``kg-rag-serving.json``: process id and URL) while it runs, so that another
command finding the store locked can read through the service instead of failing
(:func:`kg_rag.store.open_store`). The engine's own read-only mode is not used for that: its
documentation calls opening a store read-only while another process writes it undefined
behaviour."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: the announcement's file name in the store folder (allowed there: ``check_store_folder``)
MARKER = "kg-rag-serving.json"


@dataclass(frozen=True, slots=True)
class Serving:
    pid: int
    endpoint: str          # the service's /sparql URL
    updates: bool          # does it accept SPARQL updates (with its token)?


@contextlib.contextmanager
def announced(folder: str | Path, host: str, port: int, updates: bool) -> Iterator[None]:
    """While the block runs, the store folder says that this process serves it."""
    path = Path(folder) / MARKER
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 - a name, not a bind
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"pid": os.getpid(), "endpoint": f"http://{shown}:{port}/sparql",
                                   "updates": updates}), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:   # the service runs all the same; other commands then find it locked
        log.warning("cannot say in %s that this service holds the store (%s): other commands on "
                    "it will find it in use; give them --endpoint", folder, e)
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


def served_by(folder: str | Path) -> Serving | None:
    """The running service that announced itself in ``folder`` (None when none did, or when
    the process that did is gone, e.g. killed)."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
        pid, endpoint = int(data["pid"]), str(data["endpoint"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:   # alive, another user's
        pass
    return Serving(pid, endpoint, bool(data.get("updates")))
