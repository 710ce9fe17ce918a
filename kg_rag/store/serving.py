"""Which ``kg-rag serve`` holds an embedded store: the service announces its SPARQL endpoint in
the store folder (``kg-rag-serving.json``: process id, URL, whether it takes updates, whether it
serves read-only) while it runs, so that another command can work through the service instead
of failing or writing behind its back (:func:`kg_rag.store.open_store`). The engine's own
read-only mode is not used for that: its documentation calls opening a store read-only while
another process writes it undefined behaviour. For the same reason a store served read-only,
which the engine opens without taking its lock, must be told apart by this file: nothing else
stops another process from opening it for writing.

The service holds a lock on the file while it runs (``flock``; the kernel drops it when the
process ends, however it ends), so a file left by a killed service is not taken for a running
one — a process id alone may belong to another process by then (after a reboot, in a new
container)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pyoxigraph import NamedNode, Quad

from kg_rag.errors import StoreLockedError
from kg_rag.store.dialect import by_name
from kg_rag.store.remote import RemoteStore

log = logging.getLogger(__name__)

#: the announcement's file name in the store folder (allowed there: ``check_store_folder``)
MARKER = "kg-rag-serving.json"


@dataclass(frozen=True, slots=True)
class Serving:
    pid: int
    endpoint: str          # the service's /sparql URL
    updates: bool          # does it accept SPARQL updates (with its token)?
    read_only: bool = False  # ``serve --read-only``: the engine is open read-only, without a lock


@contextlib.contextmanager
def announced(folder: str | Path, host: str, port: int, updates: bool,
              read_only: bool = False) -> Iterator[None]:
    """While the block runs, the store folder says that this process serves it."""
    path = Path(folder) / MARKER
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 - a name, not a bind
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    tmp = path.with_suffix(".tmp")
    with contextlib.ExitStack() as stack:
        try:
            held = stack.enter_context(open(tmp, "w", encoding="utf-8"))
            with contextlib.suppress(OSError):   # no locks on this file system: the pid must do
                fcntl.flock(held, fcntl.LOCK_EX)   # held until the service ends, however it ends
            json.dump({"pid": os.getpid(), "endpoint": f"http://{shown}:{port}/sparql",
                       "updates": updates, "read_only": read_only}, held)
            held.flush()
            tmp.replace(path)
        except OSError as e:   # the service runs all the same
            log.warning("cannot say in %s that this service holds the store (%s): %s", folder, e,
                        "other commands cannot tell that it is served read-only: do not write "
                        "to it while it is" if read_only else
                        "other commands on it will find it in use; give them --endpoint")
            said = False
        else:
            said = True
        try:
            yield
        finally:   # removed while still locked: no other process sees it there but unlocked
            if said:
                with contextlib.suppress(OSError):
                    path.unlink()


def served_by(folder: str | Path) -> Serving | None:
    """The running service that announced itself in ``folder`` (None when none did, or when
    the process that did is gone, e.g. killed)."""
    try:
        with open(Path(folder) / MARKER, encoding="utf-8") as f:
            data = json.load(f)
            pid, endpoint = int(data["pid"]), str(data["endpoint"])
            if not _running(f, pid):
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Serving(pid, endpoint, bool(data.get("updates")), bool(data.get("read_only")))


def _running(marker: IO[str], pid: int) -> bool:
    """Does the service that wrote ``marker`` (an open file) still run? It holds the file's
    lock while it does; where the file system has no locks, its process id is asked."""
    try:
        fcntl.flock(marker, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:   # alive, another user's
            pass
        return True
    return False


class ServedStore(RemoteStore):
    """An embedded store that a running ``kg-rag serve`` holds, worked on through the service's
    /sparql: reads always, updates where the service takes them (with its token). Refused
    before anything is sent, each in one line that says what to do: every write when the
    service serves the store read-only (this process must not write a store another one has
    open read-only, and the service takes no update), and a load (:meth:`load_graph`) in any
    case, since the service has no Graph Store Protocol route to load through."""

    def __init__(self, folder: str, serving: Serving, timeout: float, read_only: bool = False,
                 token: str | None = None) -> None:
        super().__init__(serving.endpoint, timeout=timeout,
                         read_only=read_only or serving.read_only, token=token,
                         dialect=by_name("standard"))
        self.folder = folder
        self.serving = serving

    def _held(self) -> str:
        ro = " read-only" if self.serving.read_only else ""
        return (f"the store at {self.folder} is served{ro} by kg-rag serve (pid "
                f"{self.serving.pid}, {self.serving.endpoint})")

    def check_writable(self) -> None:
        if self.serving.read_only:
            raise StoreLockedError(
                f"{self._held()}, so this command may not write to it (nothing was written): "
                f"stop that service first, or serve the store with --allow-updates instead "
                f"(ask and annotate write nothing with --no-record)")
        super().check_writable()

    def check_loadable(self) -> None:
        self.check_writable()
        raise StoreLockedError(
            f"{self._held()}, which cannot load files (nothing was sent): stop the service, "
            f"load, then serve the store again")

    def load_graph(self, graph: NamedNode, quads: Iterable[Quad],
                   progress: Callable[[int], None] | None = None) -> int:
        self.check_loadable()
        return super().load_graph(graph, quads, progress)   # pragma: no cover - refused above
