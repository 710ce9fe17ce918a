"""A real Virtuoso (Debian's ``virtuoso-opensource`` 7.2) on loopback for tests of the remote store.

Use the context manager anywhere (``with virtuoso_server() as url: ...``) or the session fixture
``virtuoso_url`` (made available to every test by tests/conftest.py)::

    def test_x(virtuoso_url: str) -> None:
        store = RemoteStore(virtuoso_url)           # url is the /sparql endpoint

``virtuoso-t`` runs in the foreground as a subprocess with its own ``virtuoso.ini`` (free loopback
ports for HTTP and ISQL, its own database folder in a temporary directory). Once it answers,
``isql-vt`` grants SPARQL_UPDATE to the anonymous SPARQL user, so the plain ``/sparql`` endpoint
takes updates and ``/sparql-graph-crud`` takes Graph Store Protocol writes. The server is stopped
(terminate, then kill) and its folder removed when the context ends. Tests that share the session
server must use their own graph IRIs or call :func:`clear` first (never ``CLEAR ALL``: that would
also empty Virtuoso's own system graphs).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.oxigraph_server import _answers, free_port

VIRTUOSO = "virtuoso-t"
ISQL = "isql-vt"
#: the Debian package's HTTP document root (its start page); any existing folder would do
VSP = Path("/var/lib/virtuoso-opensource-7/vsp")

INI = """\
[Database]
DatabaseFile       = {db}/virtuoso.db
ErrorLogFile       = {db}/virtuoso.log
LockFile           = {db}/virtuoso.lck
TransactionFile    = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
ErrorLogLevel      = 7
FileExtend         = 200
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = {db}/virtuoso-temp.db
TransactionFile    = {db}/virtuoso-temp.trx
Striping           = 0

[Parameters]
ServerPort           = 127.0.0.1:{isql_port}
DisableUnixSocket    = 1
MaxClientConnections = 10
CheckpointInterval   = 60
CaseMode             = 2
DirsAllowed          = .
NumberOfBuffers      = 10000
MaxDirtyBuffers      = 6000
ThreadsPerQuery      = 1

[HTTPServer]
ServerPort           = 127.0.0.1:{http_port}
ServerRoot           = {root}
MaxClientConnections = 10
ServerThreads        = 10
Charset              = UTF-8
EnabledGzipContent   = 0

[SPARQL]
ResultSetMaxRows           = 10000
MaxQueryCostEstimationTime = 0	; 0: no estimate refusal (7.2.5.1 estimates kg-rag queries at up to 10^8 s)
MaxQueryExecutionTime      = 60
"""


def missing() -> str | None:
    """Why Virtuoso cannot run here (None when ``virtuoso-t`` and ``isql-vt`` are installed)."""
    absent = [b for b in (VIRTUOSO, ISQL) if shutil.which(b) is None]
    if absent:
        return (f"needs Debian's virtuoso-opensource ({' and '.join(absent)} not found; "
                f"`make virtuoso-deps` installs it as root)")
    return None


def isql(port: int, statement: str, timeout: float = 30.0) -> str:
    """Run one SQL statement as dba through ``isql-vt``; RuntimeError when it reports an error."""
    done = subprocess.run([ISQL, f"127.0.0.1:{port}", "dba", "dba", f"exec={statement}"],
                          capture_output=True, text=True, timeout=timeout, check=False)
    out = done.stdout + done.stderr
    if done.returncode != 0 or "*** Error" in out:
        raise RuntimeError(f"isql-vt {statement!r} failed: {out.strip()[-500:]}")
    return out


@contextlib.contextmanager
def virtuoso_server(startup: float = 60.0) -> Iterator[str]:
    """Run ``virtuoso-t`` on free loopback ports; yield its SPARQL endpoint URL (``…/sparql``)."""
    why = missing()
    if why:
        raise RuntimeError(why)
    tmp = Path(tempfile.mkdtemp(prefix="kgr-virtuoso-"))
    db = tmp / "db"
    db.mkdir()
    http_port, isql_port = free_port(), free_port()
    while isql_port == http_port:
        isql_port = free_port()
    root = VSP if VSP.is_dir() else tmp
    ini = tmp / "virtuoso.ini"
    ini.write_text(INI.format(db=db, isql_port=isql_port, http_port=http_port, root=root),
                   encoding="utf-8")
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen([VIRTUOSO, "-f", "-c", str(ini)], cwd=tmp,
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http_port}/sparql"
    try:
        deadline = time.monotonic() + startup
        while not _answers(url):
            if proc.poll() is not None:
                text = (tmp / "server.log").read_text(errors="replace")
                raise RuntimeError(f"virtuoso-t exited with {proc.returncode}: {text[-800:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"virtuoso-t did not answer on port {http_port} in {startup}s")
            time.sleep(0.1)
        isql(isql_port, 'GRANT SPARQL_UPDATE TO "SPARQL"')
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def virtuoso_url() -> Iterator[str]:
    """SPARQL endpoint URL of one real Virtuoso for the whole test session."""
    why = missing()
    if why:
        pytest.skip(why)
    with virtuoso_server() as url:
        yield url


def clear(url: str) -> None:
    """Drop every graph of the server behind ``url`` except Virtuoso's own system graphs."""
    from kg_rag.store.virtuoso import SYSTEM_GRAPHS

    req = urllib.request.Request(
        url, data=urllib.parse.urlencode(
            {"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"}).encode(),
        headers={"Accept": "text/tab-separated-values"})
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback
        lines = resp.read().decode("utf-8").splitlines()[1:]
    graphs = [ln.strip().strip('"<>') for ln in lines if ln.strip()]
    drops = [f"DROP SILENT GRAPH <{g}>" for g in graphs if g not in SYSTEM_GRAPHS]
    if not drops:
        return
    data = urllib.parse.urlencode({"update": " ;\n".join(drops)}).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=60) as resp:  # noqa: S310
        if resp.status not in (200, 204):
            raise RuntimeError(f"dropping the test graphs answered HTTP {resp.status}")


def main(argv: list[str]) -> int:
    """``python -m tests.support.virtuoso_server CMD …``: run CMD against a fresh Virtuoso on
    loopback (``{url}`` in CMD is its SPARQL endpoint; also given as KG_RAG_ENDPOINT)."""
    import os

    if not argv:
        print("usage: python -m tests.support.virtuoso_server CMD [ARG…]  ({url}: the endpoint)")
        return 2
    why = missing()
    if why:
        print(f"skipped: {why}")
        return 0
    with virtuoso_server() as url:
        env = dict(os.environ, KG_RAG_ENDPOINT=url)
        return subprocess.run([a.replace("{url}", url) for a in argv], env=env, check=False).returncode


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
