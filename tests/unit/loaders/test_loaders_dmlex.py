"""DMLex 1.0 loader: both serialisations map to the same OntoLex graph (DATA-MODEL.md, "DMLex"),
format detection by name and content, and bad input refused with its place and nothing written."""

from __future__ import annotations

import gzip
import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode

from kg_rag.errors import LoadError
from kg_rag.namespaces import (
    DCT,
    ID,
    KGR,
    LEXICOG,
    LEXINFO,
    LIME,
    ONTOLEX,
    RDF,
    RDFS,
    SKOS,
    VARTRANS,
)
from kg_rag.store import EmbeddedStore
from loaders import detect_format, list_sources, load_file, parse_file
from tests.support.paths import DATA

DATA = DATA / "dmlex"
XML = DATA / "mini.dmlex.xml"
JSON = DATA / "mini.dmlex.json"
BASE = ID + "dmlex/example.org/dmlex/mini/"
EYE = NamedNode("https://example.org/concept/eye")
NS = 'xmlns="http://docs.oasis-open.org/lexidma/ns/dmlex-1.0"'


def objects(store: EmbeddedStore, s: NamedNode | str, p: NamedNode) -> set:
    node = s if isinstance(s, NamedNode) else NamedNode(s)
    return {q.object for q in store.oxigraph.quads_for_pattern(node, p, None)}


def texts(store: EmbeddedStore, s: NamedNode | str, p: NamedNode) -> set[tuple[str, str | None]]:
    return {(o.value, o.language) for o in objects(store, s, p) if isinstance(o, Literal)}


@pytest.fixture
def loaded(mem_store: EmbeddedStore) -> EmbeddedStore:
    load_file(mem_store, XML)
    return mem_store


def test_xml_and_json_give_the_same_graph() -> None:
    _, x = parse_file(XML)
    _, j = parse_file(JSON)
    assert set(x.quads) == set(j.quads) and x.triples == j.triples > 100
    assert (x.kind, x.media_type, j.media_type) == ("dmlex", "application/x-dmlex+xml",
                                                     "application/x-dmlex+json")
    # 3 Hebrew entries + 5 translation entries (eye, Auge, spring, wing, school); 4 + 5 senses
    assert (x.entries, x.senses, x.languages) == (8, 9, {"he", "en", "de"})


def test_resource_entry_forms_and_part_of_speech(loaded: EmbeddedStore) -> None:
    lex = NamedNode(BASE.rstrip("/"))
    assert RDF.type and objects(loaded, lex, RDF.type) == {LIME.Lexicon}
    assert texts(loaded, lex, LIME.language) == {("he", None)}
    assert texts(loaded, lex, DCT.title) == {("kg-rag DMLex test dictionary", None)}
    ayin = NamedNode(BASE + "entry/ayin-n")              # the entry's id
    assert ayin in objects(loaded, lex, LIME.entry)
    assert objects(loaded, ayin, RDF.type) == {ONTOLEX.LexicalEntry, ONTOLEX.Word}
    assert objects(loaded, ayin, LEXINFO.partOfSpeech) == {LEXINFO.noun}   # tag n, sameAs lexinfo
    lemma, = objects(loaded, ayin, ONTOLEX.canonicalForm)
    assert texts(loaded, lemma, ONTOLEX.writtenRep) == {("עין", "he")}
    plural, = objects(loaded, ayin, ONTOLEX.otherForm)
    assert texts(loaded, plural, ONTOLEX.writtenRep) == {("עיניים", "he")}
    assert objects(loaded, plural, LEXINFO.number) == {LEXINFO.plural}
    assert texts(loaded, ayin, KGR.matchKey) == {("עין", "he"), ("עיניים", "he")}
    # no id: the DMLex object id headword~partOfSpeech~homographNumber (§3.2.1.1)
    knaf = NamedNode(BASE + "entry/כנף~noun~1")
    assert objects(loaded, knaf, LEXINFO.partOfSpeech) == {LEXINFO.noun}
    school = NamedNode(BASE + "entry/בית%20ספר~n~0")
    assert ONTOLEX.MultiwordExpression in objects(loaded, school, RDF.type)


def test_senses_definitions_examples_and_labels(loaded: EmbeddedStore) -> None:
    ayin = BASE + "entry/ayin-n"
    s1, s2 = NamedNode(BASE + "sense/ayin-n-1"), NamedNode(ayin + "/sense/2")   # id / listing order
    assert objects(loaded, ayin, ONTOLEX.sense) == {s1, s2}
    assert objects(loaded, s1, ONTOLEX.isSenseOf) == {NamedNode(ayin)}
    assert [objects(loaded, s, KGR.senseRank) for s in (s1, s2)] == [{Literal(1)}, {Literal(2)}]
    assert texts(loaded, s1, DCT.identifier) == {("ayin-n-1", None)}
    assert texts(loaded, s1, RDFS.label) == {("איבר הראייה", "he")}                # indicator
    # definition in the resource's language (whitespace normalised), explanation in its own
    assert texts(loaded, s1, SKOS.definition) == {("האיבר שבו רואים.", "he"), ("the organ of sight", "en")}
    ex, = objects(loaded, s1, LEXICOG.usageExample)
    assert objects(loaded, ex, RDF.type) == {LEXICOG.UsageExample}
    both = {("יש לה עיניים ירוקות.", "he"), ("She has green eyes.", "en")}      # marker text kept
    assert texts(loaded, ex, RDF.value) == both and texts(loaded, s1, SKOS.example) == both
    # a concept label is the sense's concept, not a note; other labels are notes
    assert objects(loaded, s1, ONTOLEX.reference) == {EYE}
    assert not objects(loaded, s1, LEXINFO.usageNote)
    assert texts(loaded, s2, LEXINFO.register) == {("lit", None), ("literary", None)}
    assert texts(loaded, s2, LEXINFO.usageNote) == {("rare", None)}
    assert not objects(loaded, s2, ONTOLEX.reference)                            # a sense-only reading
    # an entry's label applies to all its senses (§3.9)
    knaf = BASE + "entry/כנף~noun~1"
    assert texts(loaded, knaf, LEXINFO.usageNote) == {("rare", None)}
    assert texts(loaded, knaf + "/sense/1", LEXINFO.usageNote) == {("rare", None)}


def test_headword_translations_are_vartrans_to_senses_of_the_same_meaning(loaded: EmbeddedStore) -> None:
    s1 = NamedNode(BASE + "sense/ayin-n-1")
    links = {q.subject for q in loaded.oxigraph.quads_for_pattern(None, VARTRANS.source, s1)}
    assert len(links) == 2
    targets = {t for link in links for t in objects(loaded, link, VARTRANS.target)}
    by_lang = {}
    for t in targets:
        entry, = objects(loaded, t, ONTOLEX.isSenseOf)
        lemma, = objects(loaded, entry, ONTOLEX.canonicalForm)
        (text, lang), = texts(loaded, lemma, ONTOLEX.writtenRep)
        by_lang[lang] = (text, entry, t)
        assert objects(loaded, t, ONTOLEX.reference) == {EYE}       # the same concept
    assert {k: v[0] for k, v in by_lang.items()} == {"en": "eye", "de": "Auge"}
    eye = by_lang["en"][1]
    assert eye == NamedNode(BASE + "translation/en/eye")
    assert objects(loaded, eye, LEXINFO.partOfSpeech) == {LEXINFO.noun}
    assert texts(loaded, eye, KGR.matchKey) == {("eye", "en"), ("eyes", "en")}
    assert NamedNode(BASE + "translation/en/eye") in objects(loaded, BASE + "lexicon/en", LIME.entry)
    # the translation of a sense without a concept refers to that sense (its reading)
    s2 = NamedNode(BASE + "entry/ayin-n/sense/2")
    link, = {q.subject for q in loaded.oxigraph.quads_for_pattern(None, VARTRANS.source, s2)}
    target, = objects(loaded, link, VARTRANS.target)
    assert objects(loaded, target, ONTOLEX.reference) == {s2}


def test_load_records_the_source(loaded: EmbeddedStore) -> None:
    rec, = list_sources(loaded)
    assert rec.graph == ID + "source/mini.dmlex" and rec.kind == "dmlex"
    assert rec.media_type == "application/x-dmlex+xml" and rec.mapping == 1
    assert set(rec.languages) == {"he", "en", "de"}


# ------------------------------------------------------------------------------ format detection


@pytest.mark.parametrize(("name", "src", "want"), [
    ("dict.dmlex.xml", XML, "dmlex-xml"), ("dict.dmlex.json", JSON, "dmlex-json"),
    ("dict.xml", XML, "dmlex-xml"), ("dict.json", JSON, "dmlex-json"),      # by content
    ("dict", XML, "dmlex-xml"), ("dict.data", JSON, "dmlex-json"),
])
def test_detected_by_name_and_by_content(tmp_path: Path, name: str, src: Path, want: str) -> None:
    p = tmp_path / name
    shutil.copy(src, p)
    assert detect_format(p) == want
    assert detect_format(p, "dmlex") == want


def test_detection_leaves_other_formats_alone(tmp_path: Path) -> None:
    ld = tmp_path / "x.json"
    ld.write_text('{"@context": {"langCode": "http://example.org/l"}, "@id": "x"}', encoding="utf-8")
    assert detect_format(ld) == "jsonld"
    rdfxml = tmp_path / "x.xml"       # the name inside, not as the root element: RDF/XML
    rdfxml.write_text('<?xml version="1.0"?>\n<!-- <lexicographicResource> -->\n<rdf:RDF xmlns:rdf='
                      '"http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description>'
                      "<lexicographicResource/></rdf:Description></rdf:RDF>", encoding="utf-8")
    assert detect_format(rdfxml) == "rdfxml"
    assert detect_format(DATA.parent / "loaders" / "mini-lmf.xml") == "wn-lmf"
    assert detect_format(DATA.parent / "loaders" / "dictionary.ttl") == "turtle"
    with pytest.raises(LoadError, match="--format dmlex"):
        detect_format(DATA.parent / "loaders" / "dictionary.ttl", "dmlex")


def test_gzipped_file_loads(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    p = tmp_path / "mini.dmlex.xml.gz"
    p.write_bytes(gzip.compress(XML.read_bytes()))
    rep = load_file(mem_store, p)
    assert rep.kind == "dmlex" and rep.senses == 9


def test_text_is_nfc(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    # points in non-canonical order (shin dot before qamats) and a decomposed é: both change under NFC
    word = "\u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd " + unicodedata.normalize("NFD", "café")
    assert not unicodedata.is_normalized("NFC", word)
    p = tmp_path / "nfd.dmlex.json"
    p.write_text(json.dumps({"langCode": "he", "entries": [{"headword": word, "senses": [
        {"definitions": [{"text": word}]}]}]}), encoding="utf-8")
    load_file(mem_store, p)
    lits = [q.object.value for q in mem_store.oxigraph if isinstance(q.object, Literal)]
    assert unicodedata.normalize("NFC", word) in lits and word not in lits
    assert all(unicodedata.is_normalized("NFC", x) for x in lits)


# ------------------------------------------------------------------------------ bad input

_ENTRY = "<entry><headword>w</headword><sense><definition><text>d</text></definition></sense></entry>"
BAD_XML = {
    "malformed": (f'<lexicographicResource {NS} langCode="he">\n  <entry><headword>w</entry>\n'
                  "</lexicographicResource>", r":2:\d+: not well-formed DMLex XML: mismatched tag"),
    "entity": ('<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY a "aaaa">]>\n'
               f'<lexicographicResource langCode="he">{_ENTRY}</lexicographicResource>',
               r":2:\d+: refused: .*internal DTD subset"),
    "unknown element": ('<lexicographicResource langCode="he">\n<entry><headword>w</headword>\n'
                        "  <gloss>x</gloss></entry></lexicographicResource>",
                        r":3:3: refused: <gloss> is not allowed in <entry>"),
    "sense without entry": (f'<lexicographicResource {NS} langCode="he">\n'
                            "<sense><definition><text>d</text></definition></sense>\n"
                            "</lexicographicResource>",
                            r":2:1: refused: <sense> is not allowed in <lexicographicResource>; "
                            r"a <sense> belongs in an <entry>"),
    "not dmlex": ('<LexicalResource>\n  <Lexicon id="x"/></LexicalResource>',
                  r":2:3: refused: <Lexicon> in the document element <LexicalResource>, which may "
                  r"hold only <lexicographicResource> elements: not DMLex"),
    "no resource": ("<dictionaries>\n</dictionaries>", r"no <lexicographicResource> element: not DMLex"),
    "lone entry": (f"<entry {NS}><headword>w</headword></entry>", r"lone <entry>, which has no langCode"),
    "no langCode": (f"<lexicographicResource>{_ENTRY}</lexicographicResource>",
                    r":1:1: the lexicographicResource lacks its langCode"),
    "bad langCode": (f'<lexicographicResource langCode="he brew">{_ENTRY}</lexicographicResource>',
                     r"is not a language tag"),
    "no headword": ('<lexicographicResource langCode="he">\n\n  <entry><sense/></entry>'
                    "</lexicographicResource>", r":3:3: an entry lacks its headword"),
    "two headwords": ('<lexicographicResource langCode="he"><entry><headword>a</headword>'
                      "<headword>b</headword></entry></lexicographicResource>",
                      r"<entry> has more than one <headword>"),
    "duplicate sense id": ('<lexicographicResource langCode="he">\n'
                           '<entry><headword>a</headword><sense id="s"/></entry>\n'
                           '<entry><headword>b</headword><sense id="s"/></entry>'
                           "</lexicographicResource>",
                           r":3:\d+: sense has the same identity as the sense at line 2"),
    "translation without langCode": ('<lexicographicResource langCode="he"><entry><headword>a</headword>'
                                     "<sense><headwordTranslation><text>x</text></headwordTranslation>"
                                     '</sense></entry><translationLanguage langCode="en"/>'
                                     '<translationLanguage langCode="de"/></lexicographicResource>',
                                     r"has no langCode and the resource declares 2 translation languages"),
    "concept label without sameAs": ('<lexicographicResource langCode="he"><entry><headword>a</headword>'
                                     '<sense><label tag="c"/></sense></entry>'
                                     '<labelTag tag="c" typeTag="concept"/></lexicographicResource>',
                                     r"the concept label 'c' has no sameAs URI"),
    "concept label on entry": ('<lexicographicResource langCode="he"><entry><headword>a</headword>'
                               '<label tag="c"/></entry><labelTag tag="c" typeTag="concept">'
                               '<sameAs uri="https://example.org/c"/></labelTag></lexicographicResource>',
                               r"a concept label belongs on a sense"),
    "relative sameAs": ('<lexicographicResource langCode="he"><entry><headword>a</headword></entry>'
                        '<labelTag tag="c" typeTag="concept"><sameAs uri="c"/></labelTag>'
                        "</lexicographicResource>", r"sameAs 'c' is not an absolute IRI"),
    "empty": ("", r"empty file \(0 bytes\)"),
}
BAD_JSON = {
    "syntax": ('{\n  "langCode": "he",\n  "entries": [}\n', r":3:\d+: not valid DMLex JSON"),
    "senses on the resource": ('{"langCode": "he", "senses": []}',
                               r"refused: \(top level\): 'senses' is not a member of a DMLex "
                               r"lexicographicResource; senses belongs in an entry"),
    "wrong type": ('{"langCode": "he", "entries": [{"headword": "a", "senses": [{"labels": "rare"}]}]}',
                   r"entries\[0\]\.senses\[0\]\.labels: must be an array of strings"),
    "no headword": ('{"langCode": "he", "entries": [{"senses": []}]}',
                    r": entries\[0\]: an entry lacks its headword"),
    "lone entry": ('{"headword": "a", "senses": []}', r"lone entry"),
    "not an object": ('["he"]', r"must be a JSON object, not list"),
    "definition without text": ('{"langCode": "he", "entries": [{"headword": "a", "senses": '
                                '[{"definitions": [{"definitionType": "x"}]}]}]}',
                                r"entries\[0\]\.senses\[0\]\.definitions\[0\]: a definition lacks its text"),
    "empty": ("", r"empty file \(0 bytes\)"),
    "nested too deeply": ('{"langCode": "he", "entries": ' + "[" * 100_000 + "]" * 100_000 + "}",
                          r"nested too deeply"),
}


def _refused(store: EmbeddedStore, path: Path, pattern: str) -> None:
    before = sorted(map(str, store.oxigraph))
    with pytest.raises(LoadError, match=pattern) as err:
        load_file(store, path)
    assert str(err.value).startswith(str(path))
    assert "\n" not in str(err.value)
    assert sorted(map(str, store.oxigraph)) == before      # nothing written, nothing removed


@pytest.mark.parametrize("case", list(BAD_XML), ids=str)
def test_bad_xml_is_refused_with_its_place(tmp_path: Path, loaded: EmbeddedStore, case: str) -> None:
    text, pattern = BAD_XML[case]
    p = tmp_path / "mini.dmlex.xml"          # the same source name as the loaded one: not replaced
    p.write_text(text, encoding="utf-8")
    _refused(loaded, p, pattern)
    assert [r.title for r in list_sources(loaded)] == ["mini.dmlex.xml"]


@pytest.mark.parametrize("case", list(BAD_JSON), ids=str)
def test_bad_json_is_refused_with_its_place(tmp_path: Path, loaded: EmbeddedStore, case: str) -> None:
    text, pattern = BAD_JSON[case]
    p = tmp_path / "mini.dmlex.json"
    p.write_text(text, encoding="utf-8")
    _refused(loaded, p, pattern)


def test_truncated_gzip_is_refused(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    p = tmp_path / "mini.dmlex.xml.gz"
    p.write_bytes(gzip.compress(XML.read_bytes())[:300])
    _refused(mem_store, p, r"truncated or corrupt gzip data")


def test_no_network_and_no_external_entities(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    """An external DTD is named, never fetched; an external entity is declared: refused."""
    p = tmp_path / "ext.dmlex.xml"
    p.write_text('<?xml version="1.0"?>\n<!DOCTYPE lexicographicResource SYSTEM '
                 '"http://192.0.2.1/dmlex.dtd">\n' f'<lexicographicResource langCode="he">{_ENTRY}'
                 "</lexicographicResource>", encoding="utf-8")
    assert load_file(mem_store, p).entries == 1
    p.write_text('<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY e SYSTEM "http://192.0.2.1/x">]>\n'
                 '<lexicographicResource langCode="he">&e;</lexicographicResource>', encoding="utf-8")
    _refused(mem_store, p, r"refused")


# ------------------------------------------------------------------------------ hostile strings

_HOSTILE = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eid=_HOSTILE, sid=_HOSTILE, headword=_HOSTILE, tag=_HOSTILE, translation=_HOSTILE)
def test_hostile_ids_and_texts_give_valid_iris_or_a_load_error(
        tmp_path: Path, eid: str, sid: str, headword: str, tag: str, translation: str) -> None:
    """Ids, headwords, tags and translations become IRI segments and literals: whatever they hold
    (``>``, spaces, ``#``, bidi controls, NUL…), the file maps to valid terms or is refused cleanly."""
    p = tmp_path / "h.dmlex.json"
    p.write_text(json.dumps({"langCode": "he", "translationLanguages": ["en"], "entries": [
        {"id": eid, "headword": headword, "partsOfSpeech": [tag], "labels": [tag],
         "inflectedForms": [{"tag": tag, "text": headword + "x"}],
         "senses": [{"id": sid, "definitions": [{"text": headword}],
                     "headwordTranslations": [{"text": translation}]}]},
        {"headword": headword, "homographNumber": tag}]}), encoding="utf-8")
    try:
        _, parsed = parse_file(p)
    except LoadError:
        return                       # blank text after whitespace normalisation, a duplicate identity
    for q in parsed.quads:
        for t in (q.subject, q.predicate, q.object):
            assert NamedNode(t.value) if isinstance(t, NamedNode) else True
            if isinstance(t, Literal):
                assert unicodedata.is_normalized("NFC", t.value)


def test_cli_loads_both_and_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kg_rag.cli import main

    store = str(tmp_path / "store")
    # one load may not send both into their one graph (mini.dmlex): one at a time, each loads
    assert main(["--store", store, "load", str(XML)]) == 0
    assert main(["--store", store, "load", str(JSON)]) == 0
    out = capsys.readouterr().out
    assert "mini.dmlex.xml: dmlex" in out and "mini.dmlex.json: dmlex" in out
    bad = tmp_path / "bad.dmlex.json"
    bad.write_text('{"langCode": "he", "senses": []}', encoding="utf-8")
    assert main(["--store", store, "load", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "senses belongs in an entry" in err


def test_several_resources_in_one_document(tmp_path: Path, mem_store: EmbeddedStore) -> None:
    """§5.1: another document element may hold several resources; §5.2: JSON Lines, one a line."""
    he = '<lexicographicResource langCode="he"><entry><headword>בית</headword></entry></lexicographicResource>'
    en = (f'<lexicographicResource {NS} langCode="en" uri="http://example.org/en">'
          "<entry><headword>house</headword></entry></lexicographicResource>")
    x = tmp_path / "both.dmlex.xml"
    x.write_text(f"<dictionaries>\n  {he}\n  {en}\n</dictionaries>", encoding="utf-8")
    j = tmp_path / "both.dmlex.json"
    j.write_text(json.dumps({"langCode": "he", "entries": [{"headword": "בית"}]}) + "\n\n"
                 + json.dumps({"langCode": "en", "uri": "http://example.org/en",
                               "entries": [{"headword": "house"}]}) + "\n", encoding="utf-8")
    _, px = parse_file(x)
    _, pj = parse_file(j)
    assert set(px.quads) == set(pj.quads) and px.entries == 2
    lexicons = {q.subject.value for q in px.quads if q.predicate == LIME.language}
    assert lexicons == {ID + "dmlex/both/1", ID + "dmlex/example.org/en"}
    j.write_text('{"langCode": "he"}\n{"langCode": "en", "entries": [{"senses": []}]}\n', encoding="utf-8")
    _refused(mem_store, j, r": line 2: entries\[0\]: an entry lacks its headword")
    j.write_text('{"langCode": "he"}\n{"langCode": \n', encoding="utf-8")
    _refused(mem_store, j, r":2:\d+: not valid DMLex JSON Lines")
    j.write_text('{"langCode": "he"}\n{"headword": "a"}\n', encoding="utf-8")
    _refused(mem_store, j, r"line 2: refused: a lone entry")


def test_a_translation_shares_the_reading_of_the_sense_it_translates(tmp_path: Path) -> None:
    """No thesaurus: the sense-only reading 'spring' of עין is also the reading of the English
    translation 'spring', so a Hebrew question finds the English document through the dictionary."""
    from kg_rag.api import KnowledgeGraph

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "c.jsonl").write_text("\n".join(json.dumps(d, ensure_ascii=False) for d in (
        {"id": "he1", "title": "he1", "text": "שתינו מים קרים מן העין שבהרים.", "lang": "he"},
        {"id": "en1", "title": "en1", "text": "We drank cold water from the spring in the hills.", "lang": "en"},
        {"id": "en2", "title": "en2", "text": "Her eyes are green.", "lang": "en"},
    )) + "\n", encoding="utf-8")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([XML])
    kg.index([docs])
    spring = BASE + "entry/ayin-n/sense/2"
    en = kg.ask("Where does the spring come from?", lang="en", k=5)
    (m,) = en.mentions
    assert [c.concept for c in m.mention.candidates] == [spring]
    he = kg.ask("מאיפה נובעת העין?", lang="he", k=5)
    (m,) = he.mentions
    assert {c.concept for c in m.mention.candidates} == {EYE.value, spring}
    hit = [r for r in he.results if r.title == "en1"]       # (whichever reading the selector prefers)
    assert hit and spring in {c.iri for c in hit[0].concepts}
