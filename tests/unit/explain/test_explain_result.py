"""Why a document answered a question (``explain(question, document=…)``) on the demo store:
the links from the question's readings to the document's annotations, with what each counted —
through the API, the CLI and the REST API over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.errors import InputError, NotFoundError
from kg_rag.resources import resource_path
from tests.support.service_server import demo_store

DEMO = resource_path("demo")
CONCEPT = "https://w3id.org/kg-rag/demo/concept/"
BIDI = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BRANCHES = ("הפירות העמיסו על הבדים", (17, 22))   # the paper's first sentence: branches, not fabric


@pytest.fixture(scope="module")
def kg() -> KnowledgeGraph:
    return KnowledgeGraph(demo_store())   # the demo, built once per test process


def _doc_iri(kg: KnowledgeGraph, doc_id: str) -> str:
    return next(d["iri"] for d in kg.documents() if d["id"] == doc_id)


def test_a_result_is_explained_by_links_that_counted(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    top = a.results[0]
    ex = kg.explain(a.question_iri, document=top.doc_iri)
    result = ex.summary["result"]
    assert result["document"] == top.doc_iri
    counted = [x for x in result["links"] if x["counted"] > 0]
    assert counted, result
    # the focus reading reaches the document: the chosen concept itself or one step from it
    focus = [x for x in counted if x["question_mention"]["text"] == "הבדים"]
    assert focus and focus[0]["question_concept"] == CONCEPT + "branch"
    assert {x["document_concept"] for x in counted} <= {c.iri for c in top.concepts}
    for x in result["links"]:
        # label matching's part, plus the expected agreement of the two decisions
        assert x["label"] == pytest.approx(x["question_weight"] * x["expansion_weight"], abs=1e-6)
        assert x["agreement"] == pytest.approx(
            x["question_probability"] * x["expansion_weight"] * x["document_probability"], abs=1e-6)
        assert x["counted"] == pytest.approx(x["label"] + x["agreement"], abs=1e-6)
        span = x["document_mention"]
        assert top.doc_iri and span["end"] > span["start"] >= 0
    text = ex.text()
    assert "why it answered" in text and not (set(text) & BIDI)
    # the graph behind it is RDF: the question's decision and the document's annotations
    assert ex.turtle() and top.doc_iri in ex.jsonld()


def test_a_document_of_the_other_sense_shows_why_it_ranks_low(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], k=40)
    fabric = _doc_iri(kg, "he-sewing-fabric")
    ranked = [r.doc_iri for r in a.results]
    # label matching keeps it among the documents with the word, behind the one read "branch"
    assert fabric in ranked and ranked.index(fabric) > ranked.index(_doc_iri(kg, "he-olive-grove"))
    links = kg.explain(a.question_iri, document=fabric).summary["result"]["links"]
    # its "בד" was read as fabric by its own decision: the branch reading agrees little
    same = {x["question_concept"]: x for x in links if x["relation"] is None}
    branch, cloth = same[CONCEPT + "branch"], same[CONCEPT + "fabric"]
    assert branch["label"] == cloth["label"] > 0          # label matching: both readings alike
    assert branch["document_probability"] < 0.5 < cloth["document_probability"]
    assert branch["document_decision"]["chosen_concept"] == CONCEPT + "fabric"
    top = kg.explain(a.question_iri, document=ranked[0]).summary["result"]["links"]
    assert max(x["agreement"] for x in top) > 0.5 * max(x["label"] for x in top)


def test_bad_requests(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    doc = a.results[0].doc_iri
    with pytest.raises(InputError, match="not a question"):
        kg.explain(doc, document=doc)
    with pytest.raises(NotFoundError, match="IRI"):      # not found, as an unknown IRI is
        kg.explain(a.question_iri, document="no-such-document-id")
    # a document id, as results show it, names the document as its IRI does
    assert (kg.explain(a.question_iri, document=a.results[0].doc_id).summary
            == kg.explain(a.question_iri, document=doc).summary)
    with pytest.raises(NotFoundError, match="not a result"):
        kg.explain(a.question_iri, document="https://example.org/no-such-document")
    with pytest.raises(NotFoundError):
        kg.explain("https://example.org/no-such-question", document=doc)


def test_cli_explain_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "store")
    assert main(["--store", store, "load", str(DEMO / "thesaurus.ttl"), str(DEMO / "dictionary.ttl")]) == 0
    assert main(["--store", store, "index", str(DEMO / "documents")]) == 0
    capsys.readouterr()
    assert main(["--store", store, "ask", BRANCHES[0], "--lang", "he", "--focus", "17:22", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    q, doc = answer["question_iri"], answer["results"][0]["iri"]
    assert main(["--store", store, "explain", q, "--document", doc, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["result"]["document"] == doc and summary["result"]["links"]
    assert main(["--store", store, "explain", q, "--document", "nope"]) == 7   # not found
    err = capsys.readouterr().err
    assert "IRI" in err and err.count("\n") == 1


def _contributions(result: object) -> list[dict[str, object]]:
    from kg_rag.serialize import result_dict

    return result_dict(result)["contributions"]  # type: ignore[arg-type,no-any-return]


@pytest.mark.parametrize("wsd", [None, "none"])
def test_the_explanation_replays_the_contributions_rank_returned(kg: KnowledgeGraph, wsd: str | None) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], wsd=wsd)
    for r in a.results[:3]:
        result = kg.explain(a.question_iri, document=r.doc_iri).summary["result"]
        assert result["score"] == pytest.approx(r.score, rel=1e-6)
        got = [{k: v for k, v in c.items() if not k.endswith("_label")} for c in result["contributions"]]
        want = _contributions(r)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g == {k: pytest.approx(v, rel=1e-5) if isinstance(v, float) else v for k, v in w.items()}
        assert result["retrieval"]["version"] == result["retrieval"]["replayed_version"]
        assert result["retrieval"]["match"] == ("label" if wsd == "none" else "fused")


def test_without_expansion_no_expansion_link_counts(kg: KnowledgeGraph) -> None:
    # with the default weights the top document is reached through a broader concept too ...
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    doc = a.results[0].doc_iri
    links = kg.explain(a.question_iri, document=doc).summary["result"]["links"]
    assert [x for x in links if x["relation"] is not None and x["counted"] > 0]
    # ... asked without expansion, the explanation lists no expansion link as counting
    b = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1], expansion={})
    result = kg.explain(b.question_iri, document=doc).summary["result"]
    assert result["retrieval"]["expansion"] == {}
    assert result["links"] and not [x for x in result["links"] if x["relation"] is not None and x["counted"] > 0]
    assert all(c["relation"] is None for c in result["contributions"])
    assert result["score"] == pytest.approx(next(r.score for r in b.results if r.doc_iri == doc), rel=1e-6)
    assert "0 expansion relations" in kg.explain(b.question_iri, document=doc).text()


def test_a_question_only_annotated_has_no_ranking_to_explain(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he")
    kg.annotate(BRANCHES[0], lang="he")   # rewrites the question's graph without a ranking
    with pytest.raises(NotFoundError, match="ask it again"):
        kg.explain(a.question_iri, document=a.results[0].doc_iri)


def test_a_decision_records_no_rank_and_explain_ranks_its_candidates_by_score(kg: KnowledgeGraph) -> None:
    a = kg.ask(BRANCHES[0], lang="he", focus=BRANCHES[1])
    ex = kg.explain(a.question_iri)
    dec = next(m["decision"] for m in ex.summary["mentions"] if m.get("decision"))
    cands = dec["candidates"]
    assert len(cands) >= 2
    assert [c["rank"] for c in cands] == list(range(1, len(cands) + 1))
    assert [c["score"] for c in cands] == sorted((c["score"] for c in cands), reverse=True)
    assert cands[0]["concept"] == dec["chosen_concept"] == CONCEPT + "branch"
    # the candidate nodes carry a concept and a score, no type and no rank (two quads fewer each)
    graph = NamedNode("https://w3id.org/kg-rag/id/graph/decisions")
    nodes = {q.object for q in kg.store.oxigraph.quads_for_pattern(
        NamedNode(dec["iri"]), NamedNode("https://w3id.org/kg-rag/ns#candidate"), None, graph)}
    preds = {q.predicate.value for n in nodes for q in kg.store.oxigraph.quads_for_pattern(n, None, None, graph)}
    assert len(nodes) == len(cands)
    assert preds == {"https://w3id.org/kg-rag/ns#concept", "https://w3id.org/kg-rag/ns#score",
                     "https://w3id.org/kg-rag/ns#sense"}
