"""WN-LMF loader: mapping to OntoLex (DATA-MODEL.md), sense keys, ILI concepts shared by lexicons."""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path
from xml.parsers import expat

import pytest
from pyoxigraph import Literal, NamedNode

from kg_rag.namespaces import ID, ILI, KGR, ONTOLEX, SKOS
from kg_rag.store import EmbeddedStore
from loaders import list_sources, load_file
from loaders.sensekeys import decode_sense_id, encode_sense_key
from tests.support.paths import DATA

DATA = DATA / "loaders"
OEWN = ID + "wn/oewn/"

# from the Hebrew lemma typed without niqqud to English definitions, through the shared ILI concept
GEVER_QUERY = """
PREFIX kgr: <https://w3id.org/kg-rag/ns#>
PREFIX ontolex: <http://www.w3.org/ns/lemon/ontolex#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
SELECT DISTINCT ?lemma ?ili ?definition WHERE {
  GRAPH ?he { ?entry kgr:matchKey "גבר"@he ;
                     ontolex:canonicalForm/ontolex:writtenRep ?lemma ;
                     ontolex:sense/ontolex:isLexicalizedSenseOf ?concept . }
  GRAPH ?en { ?concept kgr:ili ?ili ; skos:definition ?definition .
              FILTER(lang(?definition) = "en") }
}
"""


def objects(store: EmbeddedStore, s: str, p: NamedNode) -> set[str]:
    return {q.object.value for q in store.oxigraph.quads_for_pattern(NamedNode(s), p, None)}


def objs_sense_example(store: EmbeddedStore) -> set[str]:
    return objects(store, OEWN + "oewn-bank__2.40.00..", SKOS.example)


@pytest.fixture
def loaded(mem_store: EmbeddedStore) -> EmbeddedStore:
    load_file(mem_store, DATA / "mini-lmf.xml")
    load_file(mem_store, DATA / "mini-he.xml")
    return mem_store


def test_sense_key_decoding() -> None:
    assert decode_sense_id("oewn-bank__1.17.01..") == "bank%1:17:01::"
    assert decode_sense_id("oewn--apos-hood__1.14.01..") == "'hood%1:14:01::"
    assert decode_sense_id("oewn-jack--o-apos---lantern__1.06.00..") == "jack-o'-lantern%1:06:00::"
    assert decode_sense_id("oewn-.22--caliber__3.01.00..") == ".22-caliber%3:01:00::"
    assert decode_sense_id("oewn-used_to__5.00.00.accustomed-sp-to.00") == "used_to%5:00:00:accustomed_to:00"
    assert decode_sense_id("oewn-rock_-ap-n-ap-_roll__1.10.00..") == "rock_'n'_roll%1:10:00::"  # 2021–2024 ids
    assert decode_sense_id("omw-he-x-1-n", "omw-he") is None
    for key in ("bank%1:17:01::", "jack-o'-lantern%1:06:00::", "a-(b)/c,d!%1:01:00::", "x--y%1:01:00::"):
        assert decode_sense_id(encode_sense_key(key)) == key


def test_entries_forms_and_match_keys(loaded: EmbeddedStore) -> None:
    bank = OEWN + "oewn-bank-n"
    assert objects(loaded, bank, KGR.matchKey) == {"bank", "banks"}
    assert objects(loaded, bank + "#lemma", ONTOLEX.writtenRep) == {"bank"}
    assert objects(loaded, bank, ONTOLEX.otherForm) == {bank + "#form1"}
    he = ID + "wn/mini-he/mini-he-גָּדָה-n"
    reps = loaded.oxigraph.quads_for_pattern(NamedNode(he + "#lemma"), ONTOLEX.writtenRep, None)
    assert [q.object for q in reps] == [Literal("גָּדָה", language="he")]  # niqqud kept
    assert [q.object for q in loaded.oxigraph.quads_for_pattern(NamedNode(he), KGR.matchKey, None)] \
        == [Literal("גדה", language="he")]                              # niqqud stripped


def test_senses_rank_key_and_concepts(loaded: EmbeddedStore) -> None:
    s1, s2 = OEWN + "oewn-bank__1.17.01..", OEWN + "oewn-bank__1.14.00.."
    assert objects(loaded, s1, KGR.senseRank) == {"1"}
    assert objects(loaded, s2, KGR.senseRank) == {"2"}
    assert objects(loaded, s1, KGR.senseKey) == {"bank%1:17:01::"}
    assert objects(loaded, s1, ONTOLEX.isSenseOf) == {OEWN + "oewn-bank-n"}
    assert objects(loaded, s1, ONTOLEX.isLexicalizedSenseOf) == {ILI + "i85979"}
    assert objects(loaded, OEWN + "oewn-jack--o-apos---lantern__1.06.00..", KGR.senseKey) \
        == {"jack-o'-lantern%1:06:00::"}
    # ili="" and ili="in": a concept of the lexicon, no kgr:ili
    assert objects(loaded, OEWN + "oewn-jack--o-apos---lantern__1.06.00..",
                   ONTOLEX.isLexicalizedSenseOf) == {OEWN + "oewn-03596095-n"}
    assert objects(loaded, OEWN + "oewn-03596095-n", KGR.ili) == set()
    # synset relation to a synset without ILI; sense relation to a sense
    assert objects(loaded, ILI + "i85979", NamedNode("https://globalwordnet.github.io/schemas/wn#hypernym")) \
        == {OEWN + "oewn-09348214-n"}
    assert objects(loaded, s2, NamedNode("https://globalwordnet.github.io/schemas/wn#derivation")) \
        == {OEWN + "oewn-bank__2.40.00.."}
    assert objs_sense_example(loaded) == {"I bank with the savings bank on the corner"}
    c = ILI + "i85979"
    assert {SKOS.Concept.value, ONTOLEX.LexicalConcept.value} <= objects(
        loaded, c, NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"))
    defs = {q.object for q in loaded.oxigraph.quads_for_pattern(NamedNode(c), SKOS.definition, None)}
    assert Literal("שפת נהר", language="he") in defs
    assert Literal("sloping land (especially the slope beside a body of water)", language="en") in defs
    assert objects(loaded, c, SKOS.example) == {"they pulled the canoe up on the bank"}
    assert objects(loaded, OEWN + "oewn-09348214-n", SKOS.definition) == {'a geological formation that has a "slope"'}


def test_hebrew_reaches_english_through_ili(loaded: EmbeddedStore) -> None:
    q = GEVER_QUERY.replace("גבר", "גדה")
    rows = list(loaded.oxigraph.query(q))
    assert {r["ili"].value for r in rows} == {"i85979"}
    assert {r["lemma"].value for r in rows} == {"גָּדָה"}


def test_report_and_catalog(mem_store: EmbeddedStore) -> None:
    seen: list[int] = []
    r = load_file(mem_store, DATA / "mini-lmf.xml", progress=seen.append)
    assert sum(seen) == r.triples
    assert (r.kind, r.entries, r.senses, r.concepts, r.languages) == ("wn-lmf", 4, 5, 6, ("en",))
    assert r.triples == sum(1 for _ in mem_store.oxigraph.quads_for_pattern(None, None, None, NamedNode(r.graph)))
    subjects = {q.subject for q in mem_store.oxigraph.quads_for_pattern(None, None, None, NamedNode(r.graph))}
    [rec] = list_sources(mem_store)
    assert rec.entities == len(subjects) and rec.triples == r.triples and rec.kind == "wn-lmf"
    again = load_file(mem_store, DATA / "mini-lmf.xml")  # replacing: same graph, same size
    assert again.triples == r.triples
    assert sum(1 for _ in mem_store.oxigraph.quads_for_pattern(None, None, None, NamedNode(r.graph))) == r.triples


@pytest.mark.shared
@pytest.mark.slow
def test_every_oewn_sense_id_decodes(shared_data: Path) -> None:
    ids: list[str] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag == "Sense":
            ids.append(attrs["id"])

    p = expat.ParserCreate()
    p.StartElementHandler = start
    with gzip.open(shared_data / "wordnet" / "english-wordnet-2025.xml.gz", "rb") as f:
        p.ParseFile(f)
    assert len(ids) == 185_129
    shape = re.compile(r"^[^%]+%[1-5]:\d\d:\d\d:[^:]*:(\d\d)?$")
    keys = {}
    for sid in ids:
        key = decode_sense_id(sid)
        assert key is not None and shape.match(key), sid
        assert encode_sense_key(key) == sid
        keys[key] = sid
    assert len(keys) == len(ids)
    assert keys["bank%1:17:01::"] == "oewn-bank__1.17.01.."
    assert "jack-o'-lantern%1:06:00::" in keys
    assert "a_cappella%4:02:00::" in keys


def _oewn_subset(src: Path, ilis: set[str], out: Path) -> None:
    """The OEWN synsets with these ILI ids, as a small LMF file (no entries)."""
    keep: list[str] = []
    block: list[str] | None = None
    want = re.compile(r'<Synset [^>]*ili="(i\d+)"')
    with gzip.open(src, "rt", encoding="utf-8") as f:
        for line in f:
            if block is not None:
                block.append(line)
                if "</Synset>" in line:
                    keep += block
                    block = None
                continue
            m = want.search(line)
            if m and m.group(1) in ilis:
                block = [line]
    out.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<LexicalResource>\n'
                   '<Lexicon id="oewn" label="subset" language="en" email="x" license="x" version="2025">\n'
                   + "".join(keep) + "</Lexicon>\n</LexicalResource>\n", encoding="utf-8")


@pytest.mark.shared
@pytest.mark.slow
def test_gever_reaches_man_and_rooster(shared_data: Path, mem_store: EmbeddedStore, tmp_path: Path) -> None:
    he = load_file(mem_store, shared_data / "wordnet" / "omw-he-2.0.xml.gz")
    assert he.entries == 5374 and he.senses == 6543
    rows = mem_store.oxigraph.query("""
        PREFIX kgr: <https://w3id.org/kg-rag/ns#> PREFIX ontolex: <http://www.w3.org/ns/lemon/ontolex#>
        SELECT ?ili WHERE { GRAPH ?g { ?e kgr:matchKey "גבר"@he ;
          ontolex:sense/ontolex:isLexicalizedSenseOf/kgr:ili ?ili } }""")
    ilis = {r["ili"].value for r in rows}
    subset = tmp_path / "oewn-subset.xml"
    t = time.monotonic()
    _oewn_subset(shared_data / "wordnet" / "english-wordnet-2025.xml.gz", ilis, subset)
    assert time.monotonic() - t < 60
    load_file(mem_store, subset)
    defs = {r["definition"].value for r in mem_store.oxigraph.query(GEVER_QUERY)}
    assert any("adult person who is male" in d for d in defs), defs
    assert any("chicken" in d or "domestic fowl" in d for d in defs), defs
