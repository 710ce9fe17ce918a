"""A dictionary whose senses point at no concept (tests/data/sense-only): every such sense is a
reading — in annotation, selection, retrieval, explanation, provenance and ``eval wsd`` (by
``dct:identifier``, ``--lexicon``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError
from kg_rag.eval.wsd import evaluate
from kg_rag.namespaces import DECISIONS_GRAPH, KGR
from kg_rag.senses.knowledge.selector import KnowledgeSelector
from kg_rag.store import EmbeddedStore
from tests.support.paths import DATA

D = DATA / "sense-only"
DICT = "http://example.org/dict/"
FISH, VOICE = DICT + "bass-fish", DICT + "bass-voice"
DICT_GRAPH = "https://w3id.org/kg-rag/id/source/dictionary"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from kg_rag.settings import settings

    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture
def kg() -> Iterator[KnowledgeGraph]:
    g = KnowledgeGraph(EmbeddedStore(":memory:"))
    g.load([D / "thesaurus.ttl", D / "dictionary.ttl"])
    yield g
    g.close()


def _bass(kg: KnowledgeGraph, text: str):  # type: ignore[no-untyped-def]
    reports = [m for m in kg.annotate(text, lang="en") if m.mention.text == "bass"]
    assert len(reports) == 1
    return reports[0]


def test_annotation_offers_the_concept_less_senses(kg: KnowledgeGraph) -> None:
    m = _bass(kg, "a bass in the lake").mention
    assert {(c.sense, c.concept) for c in m.candidates} == {(FISH, FISH), (VOICE, VOICE)}
    assert m.ambiguous
    # a concept-backed sense of the same dictionary keeps its concept
    river = [r for r in kg.annotate("the river", lang="en") if r.mention.text == "river"]
    assert {c.concept for c in river[0].mention.candidates} == {"http://example.org/thes/river"}


def test_the_sense_evidence_is_its_definition_notes_and_label(kg: KnowledgeGraph) -> None:
    from kg_rag.pipeline.evidence import fetch_evidence

    cands = _bass(kg, "a bass").mention.candidates
    ev = {e.candidate.sense: e for e in fetch_evidence(kg.store, cands)}
    voice = ev[VOICE]
    assert [t.text for t in voice.definitions] == ["the lowest singing voice heard in a choir"]
    assert "music" in {t.text for t in voice.usage}
    assert "bass: voice" in {t.text for t in voice.labels}


@pytest.mark.parametrize(("text", "gold"), [
    ("Anglers catch a bass in the freshwater lake", FISH),
    ("The choir lacks a bass singing voice", VOICE),
])
def test_the_selector_chooses_by_definition_overlap(kg: KnowledgeGraph, text: str, gold: str) -> None:
    sel = _bass(kg, text).selection
    assert sel is not None and sel.chosen is not None
    assert sel.chosen.sense == gold and sel.chosen.concept == gold
    assert {cid for cid, _ in sel.scores} == {FISH, VOICE}


def test_retrieval_explanation_and_provenance_follow_a_sense_only_reading(kg: KnowledgeGraph) -> None:
    kg.index([D / "documents"])
    a = kg.ask("Anglers catch a bass in the freshwater lake", lang="en", k=3)
    bass = [m for m in a.mentions if m.mention.text == "bass"][0]
    assert bass.selection is not None and bass.selection.chosen is not None
    assert bass.selection.chosen.concept == FISH
    assert a.results and a.results[0].doc_id == "fishing"
    assert FISH in {c.iri for c in a.results[0].concepts}
    # provenance: the decision names the sense as chosen sense and as chosen concept
    st = kg.store.oxigraph
    dec = NamedNode(bass.decision or "")
    chosen = {q.object for q in st.quads_for_pattern(dec, KGR.chosenSense, None, DECISIONS_GRAPH)}
    assert chosen == {NamedNode(FISH)}
    assert {q.object for q in st.quads_for_pattern(dec, KGR.chosenConcept, None, DECISIONS_GRAPH)} == chosen
    # the explanation names the reading with its definition
    text = kg.explain(a.question_iri).text()
    assert "bass-fish" in text and "freshwater fish" in text
    from kg_rag.pipeline.shapes import validate

    conforms, report = validate(kg.store)
    assert conforms, report


def test_eval_wsd_scores_by_identifier_and_restricts_to_one_lexicon(kg: KnowledgeGraph) -> None:
    store = kg.store
    corpus, gold = D / "corpus.data.xml", D / "corpus.gold.key.txt"
    rep = evaluate(store, KnowledgeSelector(store), corpus, gold, lexicon="dictionary.ttl")
    assert (rep.system.total.n, rep.system.total.answered, rep.system.total.correct) == (2, 2, 2)
    # the graph IRI names the same source; the thesaurus has no "bass": no candidates
    by_iri = evaluate(store, KnowledgeSelector(store), corpus, gold, lexicon=f"<{DICT_GRAPH}>")
    assert by_iri.system.total.correct == 2
    other = evaluate(store, KnowledgeSelector(store), corpus, gold, lexicon="thesaurus")
    assert other.no_candidates == 2 and other.system.total.answered == 0
    with pytest.raises(InputError, match="no loaded source 'nowhere'"):
        evaluate(store, KnowledgeSelector(store), corpus, gold, lexicon="nowhere")


def test_cli_eval_wsd_lexicon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "store")
    assert main(["--store", path, "load", str(D / "thesaurus.ttl"), str(D / "dictionary.ttl")]) == 0
    args = ["--store", path, "eval", "wsd", "--data", str(D / "corpus.data.xml"),
            "--gold", str(D / "corpus.gold.key.txt"), "--json"]
    assert main([*args, "--lexicon", "dictionary"]) == 0
    assert '"correct": 2' in capsys.readouterr().out
    assert main([*args, "--lexicon", "nowhere"]) != 0
    err = capsys.readouterr().err
    assert "no loaded source 'nowhere'" in err and len(err.strip().splitlines()) == 1


def test_a_sense_only_reading_shows_its_lemma_and_definition_not_its_iri(kg: KnowledgeGraph) -> None:
    """The two *bass* readings are dictionary senses with no concept: they show as the entry's
    written form (the same for both), so each gets its definition beside it."""
    labels = kg.labels([FISH, VOICE], "en")
    assert labels == {FISH: "bass", VOICE: "bass"}
    glosses = kg.glosses([FISH, VOICE], "en")
    assert set(glosses) == {FISH, VOICE} and glosses[FISH] != glosses[VOICE]
    from kg_rag.cli.render import mention_lines

    lines = "\n".join(mention_lines([_bass(kg, "a bass in the lake")], labels, glosses))
    assert DICT not in lines and glosses[FISH] in lines and glosses[VOICE] in lines
