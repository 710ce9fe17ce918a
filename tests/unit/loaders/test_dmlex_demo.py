"""demo/dictionary.dmlex.xml: the Hebrew lexicon of demo/dictionary.ttl in DMLex, with the same
content and, loaded with the thesaurus instead of the Turtle dictionary, the same answers."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode

import loaders
from kg_rag.api import KnowledgeGraph
from kg_rag.namespaces import KGR, LEXICOG, LEXINFO, LIME, ONTOLEX, RDF, SKOS, VARTRANS
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")
DMLEX = DEMO / "dictionary.dmlex.xml"
HE_LEXICON = NamedNode("https://w3id.org/kg-rag/demo/lex/he")
BIDI = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\u061c\ufeff\u2060-\u2064]")
NIQQUD = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")


def _questions() -> list[dict[str, Any]]:
    lines = (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [q for q in (json.loads(x) for x in lines if x) if q["lang"] == "he" and not q.get("figurative")]


def _figurative() -> list[dict[str, Any]]:
    lines = (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [q for q in (json.loads(x) for x in lines if x) if q.get("figurative")]


def _one(store: EmbeddedStore, s: Any, p: NamedNode) -> Any:
    (o,) = [q.object for q in store.oxigraph.quads_for_pattern(s, p, None)]
    return o


def _all(store: EmbeddedStore, s: Any, p: NamedNode) -> list[Any]:
    return [q.object for q in store.oxigraph.quads_for_pattern(s, p, None)]


def _texts(store: EmbeddedStore, s: Any, p: NamedNode) -> set[tuple[str, str | None]]:
    return {(o.value, o.language) for o in _all(store, s, p) if isinstance(o, Literal)}


def _hebrew_dictionary(store: EmbeddedStore, lexicon: NamedNode) -> dict[tuple[str, str], Any]:
    """Per (headword, part of speech): forms, and per sense in rank order its concept,
    definitions, examples, usage-note words and translation texts."""
    out = {}
    for e in _all(store, lexicon, LIME.entry):
        lemma = _one(store, _one(store, e, ONTOLEX.canonicalForm), ONTOLEX.writtenRep).value
        pos = _one(store, e, LEXINFO.partOfSpeech).value
        forms = {_one(store, f, ONTOLEX.writtenRep).value for f in _all(store, e, ONTOLEX.otherForm)}
        senses = sorted(_all(store, e, ONTOLEX.sense), key=lambda s: int(_one(store, s, KGR.senseRank).value))
        rows = []
        for s in senses:
            examples = {t for x in _all(store, s, LEXICOG.usageExample) for t in _texts(store, x, RDF.value)}
            notes = {w.casefold() for p in (LEXINFO.usageNote, LEXINFO.register)
                     for o in _all(store, s, p) for w in re.findall(r"\w+", o.value)}
            translations = set()
            for q in store.oxigraph.quads_for_pattern(None, VARTRANS.source, s):
                target = _one(store, q.subject, VARTRANS.target)
                te = _one(store, target, ONTOLEX.isSenseOf)
                translations |= _texts(store, _one(store, te, ONTOLEX.canonicalForm), ONTOLEX.writtenRep)
            rows.append((_one(store, s, ONTOLEX.reference), _texts(store, s, SKOS.definition), examples,
                         notes, translations))
        out[(lemma, pos)] = (forms, rows)
    return out


def test_same_hebrew_content_as_the_turtle_dictionary(mem_store: EmbeddedStore) -> None:
    loaders.load_file(mem_store, DEMO / "dictionary.ttl")
    rep = loaders.load_file(mem_store, DMLEX)
    assert rep.kind == "dmlex" and loaders.detect_format(DMLEX) == "dmlex-xml"
    ttl = _hebrew_dictionary(mem_store, HE_LEXICON)
    (dmlex_lexicon,) = [q.subject for q in mem_store.oxigraph.quads_for_pattern(
        None, LIME.language, Literal("he")) if q.subject != HE_LEXICON]
    dml = _hebrew_dictionary(mem_store, dmlex_lexicon)
    assert len(ttl) == 13 and set(dml) == set(ttl)
    for key, (forms, rows) in ttl.items():
        d_forms, d_rows = dml[key]
        assert d_forms == forms, key
        assert len(d_rows) == len(rows), key
        for (c, defs, ex, notes, tr), (dc, ddefs, dex, dnotes, dtr) in zip(rows, d_rows, strict=True):
            assert (dc, ddefs, dex, dtr) == (c, defs, ex, tr), key
            assert notes <= dnotes, key            # the label tags are kept beside their descriptions


def test_file_is_nfc_without_bidi_controls_or_niqqud() -> None:
    text = DMLEX.read_text(encoding="utf-8")
    assert unicodedata.normalize("NFC", text) == text
    assert not BIDI.search(text) and not NIQQUD.search(text)


@pytest.fixture(scope="module")
def graphs() -> dict[str, KnowledgeGraph]:
    out = {}
    for name in ("dictionary.ttl", "dictionary.dmlex.xml"):
        kg = KnowledgeGraph(EmbeddedStore(":memory:"))
        kg.load([DEMO / "thesaurus.ttl", DEMO / name])
        kg.index([DEMO / "documents"])
        out[name] = kg
    return out


def _chosen(kg: KnowledgeGraph, q: dict[str, Any]) -> str | None:
    a = kg.ask(q["text"], lang="he", k=5, focus=tuple(q["focus"]))
    focus = [r for r in a.mentions if r.mention.start < q["focus"][1] and q["focus"][0] < r.mention.end]
    assert focus and focus[0].mention.ambiguous
    assert a.results
    sel = focus[0].selection
    return sel.chosen.concept if sel is not None and sel.chosen is not None else None


@pytest.mark.parametrize("q", _questions(), ids=lambda q: q["id"])
def test_dmlex_dictionary_gives_the_same_answers(graphs: dict[str, KnowledgeGraph], q: dict[str, Any]) -> None:
    """The paper's four sentences (4/4) and the common readings of the same Hebrew words."""
    dmlex = _chosen(graphs["dictionary.dmlex.xml"], q)
    assert dmlex == q["gold_concept"]
    assert dmlex == _chosen(graphs["dictionary.ttl"], q)


@pytest.mark.parametrize("q", _figurative(), ids=lambda q: q["id"])
def test_dmlex_idiom_label_reads_the_phrase_as_a_whole(graphs: dict[str, KnowledgeGraph], q: dict[str, Any]) -> None:
    """A DMLex entry labelled idiom is a figurative phrase like lexinfo:termType lexinfo:idiom."""
    start, end = q["focus"]
    for name, kg in graphs.items():
        a = kg.ask(q["text"], lang="he", k=5, focus=(start, end))
        inside = [r.mention for r in a.mentions if start <= r.mention.start and r.mention.end <= end]
        assert [(m.start, m.end, m.concepts) for m in inside] == [(start, end, (q["gold_concept"],))], name
        assert a.results and a.results[0].doc_id in q["relevant"], name
        assert not {r.doc_id for r in a.results} & set(q["not_relevant"]), name


def test_the_paper_sentences_are_among_them() -> None:
    assert sum(1 for q in _questions() if q.get("paper")) == 4
