"""The bundled demo sample (demo/): it parses, it is complete, and it says what the demo needs.

The checks are on the files themselves (pyoxigraph and json), so they hold whatever the loaders
do; the last tests also push the files through the loaders and the document readers.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg_rag.namespaces import KGR, LEXICOG, LEXINFO, LIME, ONTOLEX, RDF, SKOS, SKOSXL, VARTRANS
from tests.support.paths import ROOT

DEMO = ROOT / "demo"
CONCEPT_NS = "https://w3id.org/kg-rag/demo/concept/"
LEX_NS = "https://w3id.org/kg-rag/demo/lex/"
BIDI = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\u061c\ufeff\u2060-\u2064]")
NIQQUD = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")
HEBREW_PREFIX_LETTERS = "הובלמשכ"


def _graph(name: str) -> ox.Store:
    s = ox.Store()
    s.load(path=str(DEMO / name), format=ox.RdfFormat.TURTLE)
    return s


@pytest.fixture(scope="module")
def thesaurus() -> ox.Store:
    return _graph("thesaurus.ttl")


@pytest.fixture(scope="module")
def dictionary() -> ox.Store:
    return _graph("dictionary.ttl")


def _objects(g: ox.Store, s: ox.NamedNode | ox.BlankNode, p: ox.NamedNode) -> list:
    return [q.object for q in g.quads_for_pattern(s, p, None)]


def _subjects_of_type(g: ox.Store, cls: ox.NamedNode) -> list[ox.NamedNode]:
    return sorted({q.subject for q in g.quads_for_pattern(None, RDF.type, cls)}, key=str)


def _labels(
    g: ox.Store, c: ox.NamedNode, plain: ox.NamedNode, xl: ox.NamedNode
) -> list[ox.Literal]:
    out = [o for o in _objects(g, c, plain) if isinstance(o, ox.Literal)]
    for label in _objects(g, c, xl):
        out += [o for o in _objects(g, label, SKOSXL.literalForm) if isinstance(o, ox.Literal)]
    return out


def _jsonl(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


# ---------------------------------------------------------------------------------- thesaurus


def test_thesaurus_has_one_scheme_and_enough_concepts(thesaurus: ox.Store) -> None:
    schemes = _subjects_of_type(thesaurus, SKOS.ConceptScheme)
    assert len(schemes) == 1
    concepts = _subjects_of_type(thesaurus, SKOS.Concept)
    assert 40 <= len(concepts) <= 90
    for c in concepts:
        assert c.value.startswith(CONCEPT_NS), c
        assert _objects(thesaurus, c, SKOS.inScheme) == [schemes[0]], c
    tops = {o for o in _objects(thesaurus, schemes[0], SKOS.hasTopConcept)}
    assert tops == {
        q.subject for q in thesaurus.quads_for_pattern(None, SKOS.topConceptOf, schemes[0])
    }


def test_every_concept_has_one_preflabel_in_he_en_de_and_an_english_definition(
    thesaurus: ox.Store,
) -> None:
    for c in _subjects_of_type(thesaurus, SKOS.Concept):
        prefs = _labels(thesaurus, c, SKOS.prefLabel, SKOSXL.prefLabel)
        langs = [p.language for p in prefs]
        for lang in ("he", "en", "de"):
            assert langs.count(lang) == 1, f"{c.value}: {langs.count(lang)} prefLabels in {lang}"
        assert len(langs) == len(set(langs)), f"{c.value}: two prefLabels in one language"
        defs = [d for d in _objects(thesaurus, c, SKOS.definition) if d.language == "en"]
        assert len(defs) == 1 and len(defs[0].value) > 20, c.value


def test_no_concept_without_a_place_in_the_hierarchy(thesaurus: ox.Store) -> None:
    for c in _subjects_of_type(thesaurus, SKOS.Concept):
        assert _objects(thesaurus, c, SKOS.broader) or _objects(thesaurus, c, SKOS.topConceptOf), (
            c.value
        )


def test_links_point_at_concepts_and_come_in_both_directions(thesaurus: ox.Store) -> None:
    concepts = set(_subjects_of_type(thesaurus, SKOS.Concept))
    pairs = {
        p: {(q.subject, q.object) for q in thesaurus.quads_for_pattern(None, p, None)}
        for p in (SKOS.broader, SKOS.narrower, SKOS.related)
    }
    for p, edges in pairs.items():
        for s, o in edges:
            assert s in concepts and o in concepts, (s, p, o)
            assert s != o
    assert {(o, s) for s, o in pairs[SKOS.broader]} == pairs[SKOS.narrower]
    assert {(o, s) for s, o in pairs[SKOS.related]} == pairs[SKOS.related]
    # SKOS integrity: related and broader (transitively) are disjoint, and no broader cycle
    up: dict[ox.NamedNode, set] = defaultdict(set)
    for s, o in pairs[SKOS.broader]:
        up[s].add(o)

    def ancestors(c: ox.NamedNode) -> set:
        seen: set = set()
        todo = list(up[c])
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo.extend(up[x])
        return seen

    for c in concepts:
        assert c not in ancestors(c), f"broader cycle through {c.value}"
    for s, o in pairs[SKOS.related]:
        assert o not in ancestors(s) and s not in ancestors(o), (s, o)


def test_skosxl_labels_are_used_for_a_few_concepts(thesaurus: ox.Store) -> None:
    xl = {q.subject for q in thesaurus.quads_for_pattern(None, SKOSXL.prefLabel, None)}
    assert 3 <= len(xl) <= 6
    for (
        c
    ) in xl:  # an XL concept carries its labels only as SKOS-XL (so the loader must materialise)
        assert not _objects(thesaurus, c, SKOS.prefLabel)
    for q in thesaurus.quads_for_pattern(None, SKOSXL.literalForm, None):
        assert ox.Quad(q.subject, RDF.type, SKOSXL.Label, q.graph_name) in thesaurus


def _concepts_with_label(g: ox.Store, text: str, lang: str) -> set[str]:
    out = set()
    for c in _subjects_of_type(g, SKOS.Concept):
        labels = _labels(g, c, SKOS.prefLabel, SKOSXL.prefLabel) + _labels(
            g, c, SKOS.altLabel, SKOSXL.altLabel
        )
        if any(lab.value == text and lab.language == lang for lab in labels):
            out.add(c.value.removeprefix(CONCEPT_NS))
    return out


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("בד", "he", {"fabric", "branch"}),
        ("בר", "he", {"bar", "wilderness"}),
        ("גבר", "he", {"man", "rooster"}),
        ("bar", "en", {"bar", "metal-bar", "legal-profession"}),
        ("bank", "en", {"bank", "river-bank"}),
        ("branch", "en", {"branch", "branch-office"}),
        ("Bank", "de", {"bank", "bench"}),
        ("Zug", "de", {"train", "draught"}),
        ("Hahn", "de", {"rooster", "tap"}),
    ],
)
def test_ambiguous_words_are_ambiguous_in_the_thesaurus(
    thesaurus: ox.Store, text: str, lang: str, expected: set[str]
) -> None:
    assert _concepts_with_label(thesaurus, text, lang) == expected


# ---------------------------------------------------------------------------------- dictionary


def _senses_by_entry(d: ox.Store) -> dict[ox.NamedNode, list[ox.NamedNode]]:
    return {e: _objects(d, e, ONTOLEX.sense) for e in _subjects_of_type(d, ONTOLEX.LexicalEntry)}


def test_lexicons_per_language_list_every_entry(dictionary: ox.Store) -> None:
    lexicons = _subjects_of_type(dictionary, LIME.Lexicon)
    langs = {_objects(dictionary, lx, LIME.language)[0].value: lx for lx in lexicons}
    assert set(langs) == {"he", "en", "de"}
    listed = set()
    for lang, lx in langs.items():
        for e in _objects(dictionary, lx, LIME.entry):
            listed.add(e)
            for f in _objects(dictionary, e, ONTOLEX.canonicalForm) + _objects(
                dictionary, e, ONTOLEX.otherForm
            ):
                reps = _objects(dictionary, f, ONTOLEX.writtenRep)
                assert len(reps) == 1 and reps[0].language == lang, (e, f)
            assert len(_objects(dictionary, e, ONTOLEX.canonicalForm)) == 1, e
            assert _objects(dictionary, e, LEXINFO.partOfSpeech), e
    assert listed == set(_subjects_of_type(dictionary, ONTOLEX.LexicalEntry))
    assert all(e.value.startswith(LEX_NS) for e in listed)


def test_every_sense_has_definition_example_reference_and_rank(
    dictionary: ox.Store, thesaurus: ox.Store
) -> None:
    concepts = {c.value for c in _subjects_of_type(thesaurus, SKOS.Concept)}
    senses = _senses_by_entry(dictionary)
    assert set(_subjects_of_type(dictionary, ONTOLEX.LexicalSense)) == {
        s for ss in senses.values() for s in ss
    }
    for e, ss in senses.items():
        lang = _objects(
            dictionary, _objects(dictionary, e, ONTOLEX.canonicalForm)[0], ONTOLEX.writtenRep
        )[0].language
        ranks = []
        for s in ss:
            assert _objects(dictionary, s, ONTOLEX.isSenseOf) == [e]
            refs = _objects(dictionary, s, ONTOLEX.reference)
            assert len(refs) == 1 and refs[0].value in concepts, (s, refs)
            (rank,) = _objects(dictionary, s, KGR.senseRank)
            assert rank.datatype == ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")
            ranks.append(int(rank.value))
            def_langs = {d.language for d in _objects(dictionary, s, SKOS.definition)}
            assert "en" in def_langs and lang in def_langs, (s, def_langs)
            examples = [
                v
                for ex in _objects(dictionary, s, LEXICOG.usageExample)
                for v in _objects(dictionary, ex, RDF.value)
            ]
            assert any(v.language == lang for v in examples), s
        assert sorted(ranks) == list(range(1, len(ss) + 1)), (e, ranks)


def _entry(d: ox.Store, written: str, lang: str, pos: str) -> ox.NamedNode:
    found = [
        e
        for e in _subjects_of_type(d, ONTOLEX.LexicalEntry)
        if ox.Literal(written, language=lang)
        in [
            r
            for f in _objects(d, e, ONTOLEX.canonicalForm)
            for r in _objects(d, f, ONTOLEX.writtenRep)
        ]
        and _objects(d, e, LEXINFO.partOfSpeech) == [LEXINFO.term(pos)]
    ]
    assert len(found) == 1, (written, pos, found)
    return found[0]


def _ranked(d: ox.Store, e: ox.NamedNode) -> list[tuple[str, list[str]]]:
    """(concept local name, usage notes) of each sense in rank order."""
    rows = []
    for s in _objects(d, e, ONTOLEX.sense):
        rank = int(_objects(d, s, KGR.senseRank)[0].value)
        concept = _objects(d, s, ONTOLEX.reference)[0].value.removeprefix(CONCEPT_NS)
        rows.append((rank, concept, sorted(n.value for n in _objects(d, s, LEXINFO.usageNote))))
    return [(c, n) for _, c, n in sorted(rows)]


def test_the_papers_four_hebrew_words(dictionary: ox.Store) -> None:
    d = dictionary
    bad = _ranked(d, _entry(d, "בד", "he", "noun"))
    assert [c for c, _ in bad] == ["fabric", "branch"] and "literary" in bad[1][1] and not bad[0][1]
    bar = _ranked(d, _entry(d, "בר", "he", "noun"))
    assert [c for c, _ in bar] == ["bar", "wilderness"] and not bar[0][1] and not bar[1][1]
    assert [c for c, _ in _ranked(d, _entry(d, "בר", "he", "adjective"))] == ["wild"]
    mitag_e = _entry(d, "מיתג", "he", "verb")
    mitag = _ranked(d, mitag_e)
    assert [c for c, _ in mitag] == ["branding", "restraint"] and "rare" in mitag[1][1]
    forms = {
        r.value
        for f in _objects(d, mitag_e, ONTOLEX.otherForm)
        for r in _objects(d, f, ONTOLEX.writtenRep)
    }
    assert "למתג" in forms
    gever = _ranked(d, _entry(d, "גבר", "he", "noun"))
    assert [c for c, _ in gever] == ["man", "rooster"] and "rare" in gever[1][1]
    assert any("rabbinic" in n or "Talmud" in n for n in gever[1][1])


def test_translations_link_hebrew_senses_to_english_and_german_senses(dictionary: ox.Store) -> None:
    d = dictionary
    senses = set(_subjects_of_type(d, ONTOLEX.LexicalSense))
    targets: dict[ox.NamedNode, set[str]] = defaultdict(set)
    for t in _subjects_of_type(d, VARTRANS.Translation):
        (src,) = _objects(d, t, VARTRANS.source)
        (tgt,) = _objects(d, t, VARTRANS.target)
        assert src in senses and tgt in senses, t
        # a translation joins senses of the same concept
        assert _objects(d, src, ONTOLEX.reference) == _objects(d, tgt, ONTOLEX.reference), t
        targets[src].add(tgt.value.removeprefix(LEX_NS)[:2])
    for word, pos in (("בד", "noun"), ("בר", "noun"), ("מיתג", "verb"), ("גבר", "noun")):
        for s in _objects(d, _entry(d, word, "he", pos), ONTOLEX.sense):
            assert targets[s] == {"en", "de"}, (word, s)


def test_ambiguous_english_and_german_entries(dictionary: ox.Store) -> None:
    d = dictionary
    assert [c for c, _ in _ranked(d, _entry(d, "bank", "en", "noun"))] == ["bank", "river-bank"]
    assert [c for c, _ in _ranked(d, _entry(d, "bar", "en", "noun"))] == [
        "bar",
        "metal-bar",
        "legal-profession",
    ]
    assert [c for c, _ in _ranked(d, _entry(d, "Zug", "de", "noun"))] == ["train", "draught"]
    assert [c for c, _ in _ranked(d, _entry(d, "Hahn", "de", "noun"))] == ["rooster", "tap"]
    german_bank = [
        e
        for e in _subjects_of_type(d, ONTOLEX.LexicalEntry)
        if ox.Literal("Bank", language="de")
        in [
            r
            for f in _objects(d, e, ONTOLEX.canonicalForm)
            for r in _objects(d, f, ONTOLEX.writtenRep)
        ]
    ]
    assert sorted(c for e in german_bank for c, _ in _ranked(d, e)) == ["bank", "bench"]


def test_no_kg_rag_vocabulary_but_sense_rank(thesaurus: ox.Store, dictionary: ox.Store) -> None:
    for g in (thesaurus, dictionary):
        used = {q.predicate.value for q in g} | {
            q.object.value for q in g if isinstance(q.object, ox.NamedNode)
        }
        assert {u for u in used if u.startswith(str(KGR))} <= {KGR.senseRank.value}


# ---------------------------------------------------------------------------------- questions

WORD_CHAR = re.compile(r"\w")


def test_questions_focus_the_ambiguous_word_and_gold_concepts_exist(
    thesaurus: ox.Store, dictionary: ox.Store
) -> None:
    concepts = {c.value for c in _subjects_of_type(thesaurus, SKOS.Concept)}
    qs = _jsonl(DEMO / "questions.jsonl")
    assert len({q["id"] for q in qs}) == len(qs) >= 14
    paper = [q for q in qs if q.get("paper")]
    assert [q["text"] for q in paper] == [
        "הפירות העמיסו על הבדים",
        "שמירה על הבר עמדה במוקד עיסוקיו",
        "הוא מיתג את הדחף לצפות בחדשות",
        "הגבר קרא בקול עם הזריחה",
    ]
    assert [q["gold_concept"].removeprefix(CONCEPT_NS) for q in paper] == [
        "branch",
        "wilderness",
        "restraint",
        "rooster",
    ]
    assert {q["lang"] for q in qs} == {"he", "en", "de"}
    for q in qs:
        assert set(q) >= {"id", "text", "lang", "focus", "gold_concept", "note"}, q["id"]
        assert q["gold_concept"] in concepts, q["id"]
        start, end = q["focus"]
        text = q["text"]
        word = text[start:end]
        assert 0 <= start < end <= len(text) and word.strip() == word and word, q["id"]
        # the focus is a whole word
        assert start == 0 or not WORD_CHAR.match(text[start - 1]), q["id"]
        assert end == len(text) or not WORD_CHAR.match(text[end]), q["id"]
        # and one that names the gold concept through the dictionary or a thesaurus label
        keys = {word.casefold()}
        k = 0   # Hebrew prefix letters: one or more (כש+כרסה)
        while q["lang"] == "he" and k < 3 and word[k] in HEBREW_PREFIX_LETTERS:
            k += 1
            keys.add(word[k:])
        assert _names_concept(thesaurus, dictionary, keys, q["lang"], q["gold_concept"]), q["id"]


def _names_concept(t: ox.Store, d: ox.Store, keys: set[str], lang: str, concept: str) -> bool:
    for f in _subjects_of_type(d, ONTOLEX.Form):
        for rep in _objects(d, f, ONTOLEX.writtenRep):
            if rep.language == lang and rep.value.casefold() in keys:
                entries = [
                    q.subject
                    for p in (ONTOLEX.canonicalForm, ONTOLEX.otherForm)
                    for q in d.quads_for_pattern(None, p, f)
                ]
                if any(
                    r.value == concept
                    for e in entries
                    for s in _objects(d, e, ONTOLEX.sense)
                    for r in _objects(d, s, ONTOLEX.reference)
                ):
                    return True
    c = ox.NamedNode(concept)
    labels = _labels(t, c, SKOS.prefLabel, SKOSXL.prefLabel) + _labels(
        t, c, SKOS.altLabel, SKOSXL.altLabel
    )
    return any(lab.language == lang and lab.value.casefold() in keys for lab in labels)


# ---------------------------------------------------------------------------------- documents


def test_corpus_records() -> None:
    docs = _jsonl(DEMO / "documents" / "corpus.jsonl")
    assert len({d["id"] for d in docs}) == len(docs)
    for d in docs:
        assert set(d) == {"id", "title", "text", "lang"}, d["id"]
        assert d["lang"] in {"he", "en", "de", "fr", "ar"}
        assert d["title"] and 80 <= len(d["text"]) <= 800, d["id"]
        assert "\n" not in d["text"]
    langs = [d["lang"] for d in docs]
    assert min(langs.count(x) for x in ("he", "en", "de")) >= 8
    assert {"fr", "ar"} <= set(langs)


def test_documents_are_read_by_the_readers() -> None:
    from kg_rag.documents import read_documents

    docs = read_documents([DEMO / "documents"], 1_000_000)
    ids = [d.id for d in docs]
    assert 24 <= len(docs) <= 44 and len(set(ids)) == len(ids)
    by_id = {d.id: d for d in docs}
    html = by_id["he-desert-wildlife"]
    assert (
        html.title == "חיות הבר במדבר יהודה"
        and "<p>" not in html.text
        and "שמירת הטבע" in html.text
    )
    md = by_id["orchard-calendar"]
    assert md.title == "The orchard calendar" and "branches" in md.text


# ---------------------------------------------------------------------------------- all text


def _demo_files() -> list[Path]:
    return sorted(
        p for p in DEMO.rglob("*") if p.is_file() and p.suffix in {".ttl", ".jsonl", ".md", ".html"}
    )


@pytest.mark.parametrize("path", _demo_files(), ids=lambda p: str(p.relative_to(DEMO)))
def test_text_is_nfc_without_bidi_controls_or_niqqud(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert unicodedata.normalize("NFC", text) == text
    assert not BIDI.search(text), f"bidi/format control at {BIDI.search(text).start()}"  # type: ignore[union-attr]
    assert not NIQQUD.search(text), "Hebrew must be unvocalised"
    assert "\t" not in text and "\r" not in text


# ---------------------------------------------------------------------------------- loaders


def test_demo_vocabularies_load_through_the_loaders(mem_store) -> None:  # type: ignore[no-untyped-def]
    import loaders

    t = loaders.load_file(mem_store, DEMO / "thesaurus.ttl")
    d = loaders.load_file(mem_store, DEMO / "dictionary.ttl")
    assert t.concepts == len(_subjects_of_type(_graph("thesaurus.ttl"), SKOS.Concept))
    dd = _graph("dictionary.ttl")
    assert d.entries == len(_subjects_of_type(dd, ONTOLEX.LexicalEntry))
    assert d.senses == len(_subjects_of_type(dd, ONTOLEX.LexicalSense))
    assert set(t.languages) >= {"he", "en", "de"} and set(d.languages) == {"he", "en", "de"}
