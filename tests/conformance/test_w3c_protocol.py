"""The W3C SPARQL 1.1 Protocol tests, run from their manifest against the live service.

Each test in ``../shared/data/w3c/sparql/sparql11/protocol/manifest.ttl`` is an HTTP transcript
(requests with expected status class, result format and boolean). The runner rewrites the
``/sparql/`` path prefix to ``/sparql``, loads the named graphs a test lists (``ut:graphData``)
into a fresh store, sends every request over real HTTP to uvicorn on loopback (updates enabled,
with the bearer token) and checks status class, result format and content.

Waived tests (none at the moment): WAIVED maps a test's local name to the reason.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pyoxigraph
import pytest
from rdflib import Graph, Namespace
from rdflib.collection import Collection
from rdflib.namespace import RDF, RDFS

from kg_rag.api import KnowledgeGraph
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore
from tests.support.service_server import serve

pytestmark = pytest.mark.shared

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
HTS = Namespace("http://www.w3.org/2011/http-statusCodes#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
TOKEN = "w3c-protocol-test-token"

WAIVED: dict[str, str] = {}

FORMAT_TYPES = {
    "boolean": {"application/sparql-results+json", "application/sparql-results+xml"},
    "tabular": {"application/sparql-results+json", "application/sparql-results+xml",
                "text/csv", "text/tab-separated-values"},
    "RDF": {"application/rdf+xml", "text/turtle", "application/n-triples", "application/ld+json"},
}


@dataclass
class Req:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    statuses: set[str]
    fmt: str | None
    boolean: bool | None


@dataclass
class ProtocolTest:
    name: str
    label: str
    graphs: list[tuple[Path, str]] = field(default_factory=list)
    requests: list[Req] = field(default_factory=list)


def _load(folder: Path) -> list[ProtocolTest]:
    g = Graph()
    g.parse(folder / "manifest.ttl", format="turtle", publicID=(folder / "manifest.ttl").as_uri())
    manifest = next(g.subjects(RDF.type, MF.Manifest))
    out = []
    for t in Collection(g, g.value(manifest, MF.entries)):
        test = ProtocolTest(str(t).rsplit("#", 1)[-1], str(g.value(t, MF.name)))
        for gd in g.objects(t, UT.graphData):
            file = Path(str(g.value(gd, UT.graph)).removeprefix("file://"))
            test.graphs.append((file, str(g.value(gd, RDFS.label))))
        action = g.value(t, MF.action)
        for r in Collection(g, g.value(action, HT.requests)):
            headers = {}
            hl = g.value(r, HT.headers)
            if hl is not None:
                for h in Collection(g, hl):
                    headers[str(g.value(h, HT.fieldName))] = str(g.value(h, HT.fieldValue))
            body = None
            b = g.value(r, HT.body)
            if b is not None:
                enc = str(g.value(b, CNT.characterEncoding) or "UTF-8")
                body = str(g.value(b, CNT.chars)).encode(enc.lower().replace("utf-16", "utf-16-le"))
            resp = g.value(r, HT.resp)
            statuses = {str(s).rsplit("#StatusCode", 1)[-1] for s in g.objects(resp, MF.expectedStatus)}
            fmt = g.value(resp, MF.expectedFormat)
            boolean = g.value(resp, MF.expectedBoolean)
            path = str(g.value(r, HT.absolutePath))
            assert path.startswith("/sparql/"), path
            test.requests.append(Req(str(g.value(r, HT.methodName)), "/sparql" + path[len("/sparql/"):],
                                     headers, body, statuses, str(fmt) if fmt else None,
                                     boolean.toPython() if boolean is not None else None))
        out.append(test)
    return out


def _folder() -> Path:
    from tests.conftest import SHARED

    return SHARED / "w3c" / "sparql" / "sparql11" / "protocol"


TESTS = _load(_folder()) if (_folder() / "manifest.ttl").is_file() else []


@pytest.fixture(scope="module")
def live(shared_data: Path) -> Iterator[tuple[str, EmbeddedStore]]:
    store = EmbeddedStore(":memory:")
    cfg = Settings(allow_updates=True, service_token=TOKEN, query_timeout=10.0)
    from kg_rag.service import create_app

    with serve(create_app(KnowledgeGraph(store, cfg), cfg, warm=False)) as url:
        yield url, store


def _check_body(resp: httpx.Response, req: Req) -> None:
    ctype = resp.headers.get("content-type", "").split(";")[0].strip()
    if req.fmt:
        assert ctype in FORMAT_TYPES[req.fmt], f"{ctype} is not a {req.fmt} format"
    if req.fmt == "RDF":
        fmt = pyoxigraph.RdfFormat.from_media_type(ctype)
        assert fmt is not None
        list(pyoxigraph.parse(resp.content, fmt, base_iri="http://example.org/"))
    elif req.fmt in ("boolean", "tabular"):
        if ctype.endswith("json"):
            doc = json.loads(resp.content)
            if req.fmt == "boolean":
                assert isinstance(doc.get("boolean"), bool)
            else:
                assert "bindings" in doc["results"]
        elif ctype.endswith("xml"):
            ET.fromstring(resp.content)
        else:
            assert resp.content.decode("utf-8").splitlines()
    if req.boolean is not None:
        if ctype.endswith("json"):
            assert json.loads(resp.content)["boolean"] is req.boolean
        else:
            node = ET.fromstring(resp.content).find("{http://www.w3.org/2005/sparql-results#}boolean")
            assert node is not None and node.text == str(req.boolean).lower()


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_protocol(test: ProtocolTest, live: tuple[str, EmbeddedStore]) -> None:
    if test.name in WAIVED:
        pytest.skip(f"waived: {WAIVED[test.name]}")
    url, store = live
    # through the store, as any write of the service: the query pool retires the children
    # forked before it (a write to the raw engine would not be seen by them)
    store.execute_update("CLEAR ALL")
    for file, graph in test.graphs:
        store.load_ntriples(pyoxigraph.NamedNode(graph), str(_folder() / file.name))
    with httpx.Client(base_url=url, timeout=30) as client:
        for i, req in enumerate(test.requests):
            headers = {"Authorization": f"Bearer {TOKEN}", **req.headers}
            if req.body is not None and "content-type" not in {k.lower() for k in headers}:
                headers["Content-Type"] = ""  # the transcript sends none: no default either
            resp = client.request(req.method, req.path, headers=headers, content=req.body)
            cls = f"{resp.status_code // 100}xx"
            assert cls in req.statuses, (f"{test.name} request {i}: HTTP {resp.status_code} "
                                         f"({resp.text[:200]}), expected {sorted(req.statuses)}")
            if cls == "2xx":
                _check_body(resp, req)


def test_manifest_was_read(shared_data: Path) -> None:
    assert len(TESTS) == 34
    assert sum(len(t.requests) for t in TESTS) > 34
    assert any(t.graphs for t in TESTS)
