"""RDF loaders: syntaxes, SKOS(-XL) and OntoLex materialisation, protections, catalog."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pyoxigraph
import pytest
from pyoxigraph import Literal, NamedNode

from kg_rag.errors import LoadError, NotFoundError
from kg_rag.namespaces import DCT, KGR, ONTOLEX, SKOS
from kg_rag.store import EmbeddedStore
from loaders import detect_format, drop_source, list_sources, load_file
from loaders.catalog import CATALOG_GRAPH
from tests.support.paths import DATA

DATA = DATA / "loaders"
T = "http://example.org/thes/"
D = "http://example.org/dict/"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def objs(store: EmbeddedStore, s: str, p: NamedNode) -> set[object]:
    return {q.object for q in store.oxigraph.quads_for_pattern(NamedNode(s), p, None)}


def graph_quads(store: EmbeddedStore, g: str) -> set[tuple[str, str, str]]:
    return {(str(q.subject), str(q.predicate), str(q.object))
            for q in store.oxigraph.quads_for_pattern(None, None, None, NamedNode(g))}


def test_skosxl_materialised_nfc_and_match_keys(mem_store: EmbeddedStore) -> None:
    seen: list[int] = []
    r = load_file(mem_store, DATA / "skosxl.ttl", progress=seen.append)
    assert sum(seen) == r.triples
    assert (r.kind, r.concepts, r.languages) == ("skos", 4, ("de", "en", "he"))
    branch = T + "branch"
    assert objs(mem_store, branch, SKOS.prefLabel) == {Literal("branch", language="en"),
                                                       Literal("עָנָף", language="he")}
    assert objs(mem_store, branch, SKOS.altLabel) == {Literal("Zweig", language="de")}
    assert objs(mem_store, branch, SKOS.hiddenLabel) == {Literal("BRANCH", language="en")}
    # one key per distinct (key, language): "branch" and "BRANCH" share one
    assert objs(mem_store, branch, KGR.matchKey) == {
        Literal("branch", language="en"), Literal("ענף", language="he"), Literal("zweig", language="de")}
    fruit = T + "fruit"
    assert Literal("Café", language="en") in objs(mem_store, fruit, SKOS.altLabel)   # NFC
    assert Literal("פרי", language="he") in objs(mem_store, fruit, KGR.matchKey)      # he-IL → he
    # everything else kept
    assert objs(mem_store, branch, SKOS.broader) == {NamedNode(T + "tree")}
    assert objs(mem_store, branch, SKOS.scopeNote) == {Literal("Part of a tree.", language="en")}
    assert objs(mem_store, T + "coll", SKOS.member) == {NamedNode(T + "tree"), NamedNode(branch)}
    # blank-node labels became skolem IRIs under the source graph
    labels = objs(mem_store, branch, NamedNode("http://www.w3.org/2008/05/skos-xl#altLabel"))
    assert all(isinstance(x, NamedNode) and x.value.startswith(r.graph + "/.well-known/genid/")
               for x in labels)


def test_ontolex_materialised(mem_store: EmbeddedStore) -> None:
    r = load_file(mem_store, DATA / "dictionary.ttl")
    assert (r.kind, r.entries, r.senses) == ("ontolex", 3, 5)
    bad, bar = D + "bad", D + "bar"
    assert RDF_TYPE and NamedNode(ONTOLEX.LexicalEntry.value) in objs(mem_store, bad, RDF_TYPE)
    assert objs(mem_store, bad, KGR.matchKey) == {Literal("בד", language="he"), Literal("בדים", language="he")}
    assert objs(mem_store, bar, KGR.matchKey) == {Literal("בר", language="he")}  # language from lime:language
    assert objs(mem_store, bar, DCT.language) == {Literal("he")}
    assert objs(mem_store, D + "bad-1", ONTOLEX.isSenseOf) == {NamedNode(bad)}
    assert objs(mem_store, bar, ONTOLEX.sense) == {NamedNode(D + "bar-1"), NamedNode(D + "bar-2")}
    assert NamedNode(ONTOLEX.LexicalSense.value) in objs(mem_store, D + "bad-1", RDF_TYPE)
    assert objs(mem_store, D + "bad-1", SKOS.example) == {Literal("קנתה בד לשמלה", language="he")}
    assert objs(mem_store, D + "bad-2", SKOS.example) == {Literal("הפירות העמיסו על הבדים", language="he")}
    # ranks: from the lexicog order, kept when given, absent otherwise
    assert objs(mem_store, D + "bad-1", KGR.senseRank) == {Literal(1)}
    assert objs(mem_store, D + "bad-2", KGR.senseRank) == {Literal(2)}
    assert objs(mem_store, D + "bar-2", KGR.senseRank) == {Literal(1)}
    assert objs(mem_store, D + "bar-1", KGR.senseRank) == {Literal(2)}
    assert objs(mem_store, D + "branch-en-1", KGR.senseRank) == set()
    assert objs(mem_store, D + "bad-2", ONTOLEX.reference) == {NamedNode(T + "branch")}


def _write(path: Path, data: bytes, gz: bool = False) -> Path:
    if gz:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("name,fmt,gz", [
    ("t.rdf", pyoxigraph.RdfFormat.RDF_XML, False), ("t.nt", pyoxigraph.RdfFormat.N_TRIPLES, True),
    ("t.nq", pyoxigraph.RdfFormat.N_QUADS, False), ("t.trig", pyoxigraph.RdfFormat.TRIG, False),
    ("t.jsonld", pyoxigraph.RdfFormat.JSON_LD, False), ("t.ttl", pyoxigraph.RdfFormat.TURTLE, True),
])
def test_every_syntax_gives_the_same_graph(tmp_path: Path, name: str, fmt: pyoxigraph.RdfFormat,
                                           gz: bool) -> None:
    src = [q for q in pyoxigraph.parse(path=str(DATA / "skosxl.ttl"))
           if not isinstance(q.subject, pyoxigraph.BlankNode) and not isinstance(q.object, pyoxigraph.BlankNode)]
    ref_store, store = EmbeddedStore(":memory:"), EmbeddedStore(":memory:")
    ttl = _write(tmp_path / "ref.ttl", pyoxigraph.serialize([q.triple for q in src], format=pyoxigraph.RdfFormat.TURTLE))
    data = (pyoxigraph.serialize(src, format=fmt) if fmt in (pyoxigraph.RdfFormat.N_QUADS, pyoxigraph.RdfFormat.TRIG)
            else pyoxigraph.serialize([q.triple for q in src], format=fmt))
    f = _write(tmp_path / name, data, gz)
    a = load_file(ref_store, ttl, graph="http://example.org/g")
    b = load_file(store, f, graph="http://example.org/g")
    assert a.triples == b.triples > 20
    assert graph_quads(ref_store, a.graph) == graph_quads(store, b.graph)


def test_format_detection(tmp_path: Path) -> None:
    assert detect_format(DATA / "mini-lmf.xml") == "wn-lmf"
    assert detect_format(DATA / "skosxl.ttl") == "turtle"
    noext = tmp_path / "vocab"
    shutil.copy(DATA / "skosxl.ttl", noext)
    assert detect_format(noext) == "turtle"
    assert detect_format(noext, "ontolex") == "turtle"
    lmf_gz = _write(tmp_path / "x.xml", (DATA / "mini-lmf.xml").read_bytes(), gz=True)
    assert detect_format(lmf_gz) == "wn-lmf"


# --- bad input: one-line LoadError naming the file, store unchanged -----------------------------
BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:skos="http://www.w3.org/2004/02/skos/core#">
  <skos:Concept rdf:about="http://example.org/x"><skos:prefLabel>&c;</skos:prefLabel></skos:Concept>
</rdf:RDF>
"""


def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str, str]]:
    """name → (file, format, text expected in the message)"""
    malformed = _write(tmp / "broken.ttl", b"@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b ] .\nex:d ex:e ex:f .\n")
    bomb = _write(tmp / "bomb.rdf", BOMB)
    lmf_bomb = _write(tmp / "bomb-lmf.xml", BOMB.replace(b"rdf:RDF [", b"LexicalResource [").replace(
        b"<rdf:RDF", b"<LexicalResource><Lexicon id='x' language='en'/><rdf:RDF"))
    whole = gzip.compress((DATA / "mini-lmf.xml").read_bytes() * 1)
    truncated = _write(tmp / "cut.xml.gz", whole[: len(whole) // 2])
    remote = _write(tmp / "remote.jsonld", b'{"@context": "https://schema.org/", "@id": "http://x/a", "name": "x"}')
    unknown = _write(tmp / "data.bin", b"\x00\x01\x02 not rdf at all")
    bad_lmf = _write(tmp / "bad.xml", b"<?xml version='1.0'?>\n<LexicalResource>\n<Lexicon id='x' language='en'>\n"
                                      b"<LexicalEntry id='e'><Lemma partOfSpeech='n'/></LexicalEntry>\n</Lexicon></LexicalResource>\n")
    bad_lang = _write(tmp / "badlang.xml", b"<?xml version='1.0'?>\n<LexicalResource>\n"
                                           b"<Lexicon id='x' language='en gb'>\n</Lexicon></LexicalResource>\n")
    return {
        "malformed turtle": (malformed, "auto", "broken.ttl:3"),
        "entity bomb": (bomb, "auto", "bomb.rdf:2"),
        "entity bomb in lmf": (lmf_bomb, "wn-lmf", "bomb-lmf.xml:2"),
        "truncated gzip": (truncated, "auto", "cut.xml.gz"),
        "remote context": (remote, "auto", "remote @context"),
        "missing file": (tmp / "nope.ttl", "auto", "nope.ttl: no such file"),
        "unknown format": (unknown, "auto", "data.bin"),
        "unknown format name": (DATA / "skosxl.ttl", "xlsx", "unknown format"),
        "lmf lacking attribute": (bad_lmf, "auto", "bad.xml:4"),
        "reserved graph": (DATA / "skosxl.ttl", "auto:https://w3id.org/kg-rag/id/graph/decisions", "belongs to kg-rag"),
        "relative graph": (DATA / "skosxl.ttl", "auto:relative/graph", "not an absolute IRI"),
        "lmf bad language": (bad_lang, "auto", "badlang.xml:3: 'en gb' is not a language tag"),
    }


@pytest.mark.parametrize("prefilled", [False, True])
def test_bad_input_leaves_store_unchanged(tmp_path: Path, prefilled: bool) -> None:
    store = EmbeddedStore(":memory:")
    if prefilled:
        load_file(store, DATA / "skosxl.ttl")
        load_file(store, DATA / "mini-lmf.xml")
    for name, (path, fmt, expected) in _bad_inputs(tmp_path).items():
        before = set(store.oxigraph)
        fmt, _, graph = fmt.partition(":")
        with pytest.raises(LoadError) as err:
            load_file(store, path, fmt=fmt, graph=graph or None)
        msg = str(err.value)
        assert "\n" not in msg and expected in msg, (name, msg)
        assert set(store.oxigraph) == before, name


def test_replace_source_with_bad_file_keeps_old(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    f = tmp_path / "skosxl.ttl"
    shutil.copy(DATA / "skosxl.ttl", f)
    load_file(mem_store, f)
    before = set(mem_store.oxigraph)
    f.write_text(f.read_text(encoding="utf-8") + "\nex:broken ex:", encoding="utf-8")
    with pytest.raises(LoadError):
        load_file(mem_store, f)
    assert set(mem_store.oxigraph) == before


def test_catalog_replace_list_drop(mem_store: EmbeddedStore) -> None:
    a = load_file(mem_store, DATA / "skosxl.ttl")
    load_file(mem_store, DATA / "dictionary.ttl")
    load_file(mem_store, DATA / "skosxl.ttl")  # replaced, not duplicated
    recs = {r.graph: r for r in list_sources(mem_store)}
    assert set(recs) == {a.graph, "https://w3id.org/kg-rag/id/source/dictionary"}
    rec = recs[a.graph]
    assert (rec.kind, rec.triples, rec.languages, rec.title) == ("skos", a.triples, ("de", "en", "he"), "skosxl.ttl")
    # the file's name, never the loading machine's folders (the catalog is public when served)
    assert len(rec.sha256) == 64 and rec.source == "skosxl.ttl"
    assert not any("file:" in str(q) or str(DATA) in str(q) for q in mem_store.oxigraph)
    assert rec.media_type == "text/turtle" and rec.loaded_at.endswith("Z")
    n_record = sum(1 for _ in mem_store.oxigraph.quads_for_pattern(NamedNode(a.graph), None, None, CATALOG_GRAPH))
    assert n_record == 11 + 3  # eleven properties and three languages, once each
    assert rec.mapping == 1   # skos: the first mapping
    drop_source(mem_store, a.graph)
    assert NamedNode(a.graph) not in mem_store.named_graphs()
    assert not list(mem_store.oxigraph.quads_for_pattern(NamedNode(a.graph), None, None, CATALOG_GRAPH))
    assert [r.graph for r in list_sources(mem_store)] == ["https://w3id.org/kg-rag/id/source/dictionary"]
    with pytest.raises(NotFoundError):
        drop_source(mem_store, a.graph)
    for not_a_source in (CATALOG_GRAPH.value, "https://w3id.org/kg-rag/id/graph/decisions"):
        before = set(mem_store.oxigraph)
        with pytest.raises(NotFoundError):
            drop_source(mem_store, not_a_source)
        assert set(mem_store.oxigraph) == before


@pytest.mark.shared
@pytest.mark.slow
def test_unesco(shared_data: Path, mem_store: EmbeddedStore) -> None:
    u = load_file(mem_store, shared_data / "thesauri" / "unesco-thesaurus.ttl")
    assert u.concepts == 4482 and u.languages == ("ar", "en", "es", "fr", "ru")
    assert u.triples > 88_482  # the file plus match keys
    rows = list(mem_store.oxigraph.query(
        'PREFIX kgr: <https://w3id.org/kg-rag/ns#> SELECT (COUNT(DISTINCT ?c) AS ?n) '
        'WHERE { GRAPH ?g { ?c kgr:matchKey ?k FILTER(lang(?k) = "ar") } }'))
    assert int(rows[0]["n"].value) > 4000


def test_relative_iris_resolve_under_the_source_graph_not_the_loading_folder(
        mem_store: EmbeddedStore, tmp_path: Path) -> None:
    f = tmp_path / "relative.ttl"
    f.write_text('@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n'
                 '<#c1> a skos:Concept ; skos:prefLabel "one"@en .\n'
                 '<c2> a skos:Concept ; skos:prefLabel "two"@en ; skos:broader <#c1> .\n',
                 encoding="utf-8")
    rep = load_file(mem_store, f)
    subjects = {q.subject.value for q in mem_store.oxigraph.quads_for_pattern(None, None, None, NamedNode(rep.graph))}
    assert {rep.graph + "/#c1", rep.graph + "/c2"} <= subjects
    assert not any(str(tmp_path) in str(q) or "file:" in str(q) for q in mem_store.oxigraph)
