"""Open Multilingual Wordnet tab files: WordNet 3.0 offsets → ILI concepts through the CILI map,
mapped as WN-LMF (entries, forms, senses in file order, definitions), so the lemmas meet Open
English WordNet's synsets; bad input is one line with its position, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.errors import LoadError
from kg_rag.store import EmbeddedStore
from loaders import detect_format, list_sources, load_file

DATA = Path(__file__).parents[2] / "data" / "loaders"

#: a Hebrew lexicon in OMW tab format: בנק 'bank' (money), גדה 'bank' (river) with niqqud,
#: a lemma with two senses, a definition, and a synset the CILI map lacks
TAB = ("# Test Wiktionary\theb\thttp://example.org/\tCC BY-SA\n"
       "08437235-n\theb:lemma\tבנק\n"
       "09236472-n\theb:lemma\tגָּדָה\n"
       "09236472-n\theb:def\tשפת נהר\n"
       "02293158-v\theb:lemma\tהפקיד\n"
       "08437235-n\theb:lemma\tקופה\n"
       "09236472-n\theb:lemma\tקופה\n"
       "99999999-n\theb:lemma\tזורק\n")
#: CILI: ILI id → WordNet 3.0 offset (the fixture's OEWN-style synsets carry these ILI ids)
ILI_MAP = "i85979\t09236472-n\ni81364\t08437235-n\ni26112\t02293158-v\n"


def write(folder: Path, tab: str = TAB, ili: str | None = ILI_MAP, name: str = "wn-test-heb.tab") -> Path:
    path = folder / name
    path.write_text(tab, encoding="utf-8")
    if ili is not None:
        (folder / "ili-map-pwn30.tab").write_text(ili, encoding="utf-8")
    return path


def senses(store: EmbeddedStore) -> set[tuple[str, str, int]]:
    rows = store.oxigraph.query("""
        PREFIX ontolex: <http://www.w3.org/ns/lemon/ontolex#>
        PREFIX kgr: <https://w3id.org/kg-rag/ns#>
        SELECT ?w ?c ?r WHERE { GRAPH ?g { ?e ontolex:canonicalForm/ontolex:writtenRep ?w ;
            ontolex:sense ?s . ?s ontolex:isLexicalizedSenseOf ?c ; kgr:senseRank ?r } }""")
    return {(r["w"].value, r["c"].value, int(r["r"].value)) for r in rows}  # type: ignore[index]


def test_a_tab_file_joins_english_wordnet_through_the_ili(mem_store: EmbeddedStore, tmp_path: Path) -> None:
    load_file(mem_store, DATA / "mini-lmf.xml")
    path = write(tmp_path)
    assert detect_format(path) == "omw-tab"
    rep = load_file(mem_store, path)
    assert rep.kind == "omw-tab"
    ili = "http://globalwordnet.org/ili/"
    got = senses(mem_store)
    assert ("בנק", ili + "i81364", 1) in got
    assert ("גָּדָה", ili + "i85979", 1) in got            # niqqud kept in the written form
    assert {("קופה", ili + "i81364", 1), ("קופה", ili + "i85979", 2)} <= got  # senses in file order
    assert ("הפקיד", ili + "i26112", 1) in got
    # the synset the map lacks keeps a node of its own, and the load says so
    assert any(w == "זורק" and not c.startswith(ili) for w, c, _ in got)
    assert any("no ILI id" in w for w in rep.warnings)
    [rec] = [r for r in list_sources(mem_store) if r.kind == "omw-tab"]
    assert rec.graph.endswith("/source/wn-test-heb") and "he" in rec.languages
    # the Hebrew word finds the English concept's definition through the shared ILI node
    defs = mem_store.oxigraph.query("""
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        ASK { GRAPH ?g { <http://globalwordnet.org/ili/i85979> skos:definition ?d } }""")
    assert bool(defs)


@pytest.mark.parametrize(("tab", "ili", "message"), [
    ("08437235-n\theb:lemma\tבנק\n", ILI_MAP, ":1: expected an OMW header"),
    ("# T\theb\thttp://x/\tCC\n08437235\theb:lemma\tבנק\n", ILI_MAP, ":2: expected 'NNNNNNNN-p"),
    ("# T\theb\thttp://x/\tCC\n08437235-n\tlemma\n", ILI_MAP, ":2: expected 'NNNNNNNN-p"),
    ("# T\theb\thttp://x/\tCC\n08437235-n\theb:def\tמשהו\n", ILI_MAP, "no ':lemma' lines"),
    (TAB, "i1 08437235-n\n", "ili-map-pwn30.tab:1: expected 'iNNN<TAB>NNNNNNNN-p'"),
    (TAB, None, "put ili-map-pwn30.tab (CILI) beside it or set KG_RAG_ILI_MAP"),
])
def test_bad_input_is_one_line_and_writes_nothing(mem_store: EmbeddedStore, tmp_path: Path, tab: str,
                                                  ili: str | None, message: str) -> None:
    path = write(tmp_path, tab, ili)
    before = len(mem_store.oxigraph)
    with pytest.raises(LoadError) as e:
        load_file(mem_store, path, fmt="omw-tab")
    assert message in str(e.value) and "\n" not in str(e.value)
    assert len(mem_store.oxigraph) == before


def test_the_ili_map_may_be_named_by_the_environment(mem_store: EmbeddedStore, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "cili.tab").write_text(ILI_MAP, encoding="utf-8")
    path = write(tmp_path, ili=None)
    monkeypatch.setenv("KG_RAG_ILI_MAP", str(tmp_path / "maps" / "cili.tab"))
    assert load_file(mem_store, path).senses == 6


def test_a_cili_map_itself_is_not_taken_for_a_lexicon(tmp_path: Path) -> None:
    (tmp_path / "ili-map-pwn30.tab").write_text(ILI_MAP, encoding="utf-8")
    with pytest.raises(LoadError):
        detect_format(tmp_path / "ili-map-pwn30.tab")
