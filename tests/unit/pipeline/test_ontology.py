"""ontology/: the vocabulary and the shapes parse; the valid example conforms; each broken example
fails with exactly the shapes its header names; every kgr: term the code uses is defined."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph
import pytest

from kg_rag.namespaces import KGR, PREFIXES
from kg_rag.pipeline.shapes import kg_rag_graphs, store_data_graph, validate, validate_graph
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore
from tests.support.paths import ROOT

rdflib = pytest.importorskip("rdflib")
pytest.importorskip("pyshacl")

ONTOLOGY = resource_path("ontology")
EXAMPLES = ONTOLOGY / "examples"
BROKEN = sorted((EXAMPLES / "broken").glob("*.ru"))
PREFIX_LINES = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())


def _valid_store() -> EmbeddedStore:
    s = EmbeddedStore(":memory:")
    s.oxigraph.load(path=str(EXAMPLES / "valid.trig"), format=pyoxigraph.RdfFormat.TRIG)
    return s


@pytest.mark.parametrize("name", ["kgr.ttl", "shapes.ttl"])
def test_parses_with_rdflib_and_pyoxigraph(name: str) -> None:
    path = ONTOLOGY / name
    g = rdflib.Graph().parse(str(path), format="turtle")
    quads = list(pyoxigraph.parse(path=str(path), format=pyoxigraph.RdfFormat.TURTLE))
    assert len(g) == len(quads) > 50


def _terms_used() -> set[str]:
    """Every kgr: term in the data model, the code, the query files and the shapes."""
    used: set[str] = set()
    files = [ONTOLOGY / "DATA-MODEL.md", ONTOLOGY / "shapes.ttl", EXAMPLES / "valid.trig"]
    files += list((ROOT / "kg_rag").rglob("*.py")) + list((ROOT / "loaders").rglob("*.py"))
    files += list(resource_path("sparql").glob("*.r[qu]"))
    for f in files:
        text = f.read_text(encoding="utf-8")
        used |= set(re.findall(r"\bkgr:([A-Za-z][A-Za-z0-9]*)", text))
        used |= set(re.findall(r"\bKGR\.([A-Za-z][A-Za-z0-9]*)", text))
        used |= set(re.findall(r"KGR\.term\(\"([A-Za-z][A-Za-z0-9]*)\"\)", text))
    return used - {"term"}


def test_every_kgr_term_is_defined_with_label_and_comment() -> None:
    g = rdflib.Graph().parse(str(ONTOLOGY / "kgr.ttl"), format="turtle")
    defined = {str(s)[len(str(KGR)):] for s in g.subjects(rdflib.RDF.type, None)
               if str(s).startswith(str(KGR))}
    used = _terms_used()
    assert used, "no kgr: terms found: the scan is broken"
    assert used - defined == set(), "used in the code or DATA-MODEL.md but not in ontology/kgr.ttl"
    for t in defined:
        iri = rdflib.URIRef(str(KGR) + t)
        assert g.value(iri, rdflib.RDFS.label) is not None, t
        assert g.value(iri, rdflib.RDFS.comment) is not None, t
        kind = set(g.objects(iri, rdflib.RDF.type))
        assert kind & {rdflib.OWL.Class, rdflib.OWL.ObjectProperty, rdflib.OWL.DatatypeProperty}, t
    prov_activity = rdflib.URIRef("http://www.w3.org/ns/prov#Activity")
    assert (rdflib.URIRef(str(KGR) + "SenseSelection"), rdflib.RDFS.subClassOf, prov_activity) in g


def test_valid_example_conforms() -> None:
    store = _valid_store()
    conforms, text = validate(store)
    assert conforms, text
    # what was validated: every kg-rag graph, not the loaded source
    graphs = {g.value for g in kg_rag_graphs(store)}
    assert "https://w3id.org/kg-rag/id/source/demo" not in graphs
    assert len(graphs) == 5  # catalog, decisions, alignments, a document, a question
    assert len(store_data_graph(store)) > 100


def test_shapes_have_targets_for_everything_kg_rag_writes() -> None:
    # guards against a shape silently not applying: the valid example's focus nodes
    shapes = rdflib.Graph().parse(str(ONTOLOGY / "shapes.ttl"), format="turtle")
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    targets = {str(o) for o in shapes.objects(None, sh.targetClass)}
    targets |= {str(o) for o in shapes.objects(None, sh.targetObjectsOf)}
    for cls in ["https://w3id.org/kg-rag/ns#Document", "https://w3id.org/kg-rag/ns#Question",
                "https://w3id.org/kg-rag/ns#Passage", "http://www.w3.org/ns/oa#Annotation",
                "https://w3id.org/kg-rag/ns#SenseSelection", "https://w3id.org/kg-rag/ns#candidate",
                "http://www.w3.org/ns/dcat#Dataset", "http://www.w3.org/ns/prov#SoftwareAgent",
                "http://www.w3.org/ns/oa#hasTarget", "http://www.w3.org/ns/oa#TextPositionSelector",
                "http://www.w3.org/ns/oa#TextQuoteSelector"]:
        assert cls in targets


def _header(path: Path, key: str) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"# {key}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{path.name} has no '# {key}:' line")


def test_there_are_broken_examples() -> None:
    assert len(BROKEN) >= 20


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_example_fails_with_expected_shape(path: Path) -> None:
    expected = frozenset(_header(path, "expect").split())
    store = _valid_store()
    before = len(store.oxigraph)
    store.oxigraph.update(PREFIX_LINES + path.read_text(encoding="utf-8"))
    assert len(store.oxigraph) != before or "INSERT" in path.read_text(), "the patch changed nothing"
    report = validate_graph(store_data_graph(store))
    assert not report.conforms, f"{path.name} ({_header(path, 'breaks')}) conforms"
    assert report.failed == expected, report.text


def test_validate_empty_store_conforms() -> None:
    assert validate(EmbeddedStore(":memory:"))[0]
