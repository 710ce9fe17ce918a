"""The façade completes itself: what the CLI, the service and the LangChain adapter used to do
around ``KnowledgeGraph`` (labels, sources, drop-source, stats, index with progress, resource
descriptions, raw queries, user updates) are its methods; engine-specific work is the store's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyoxigraph
import pytest

from kg_rag import ConfigError, InputError, KnowledgeGraph, NotFoundError
from kg_rag.resources import resource_path
from kg_rag.store import EmbeddedStore, RemoteStore
from kg_rag.store.base import Store

DEMO = resource_path("demo")
QUESTION = "הפירות העמיסו על הבדים"
BRANCH = "https://w3id.org/kg-rag/demo/concept/branch"
NOWHERE = "https://w3id.org/kg-rag/demo/concept/nowhere"


def demo() -> KnowledgeGraph:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    return kg


def test_labels_prefer_the_language_and_leave_out_unknown_concepts() -> None:
    kg = demo()
    he, en = kg.labels([BRANCH, NOWHERE, BRANCH], "he"), kg.labels([BRANCH], "en")
    assert set(he) == {BRANCH} and set(en) == {BRANCH}
    assert he[BRANCH] != en[BRANCH] and en[BRANCH].isascii() and not he[BRANCH].isascii()
    assert kg.labels([], "he") == {}


def test_sources_stats_and_drop_source_which_forgets_the_lexicon() -> None:
    kg = demo()
    sources = kg.sources()
    assert len(sources) == 2 and all(s["stale"] is False for s in sources)
    assert {"graph", "kind", "triples", "languages", "title", "loaded_at"} <= set(sources[0])
    stats = kg.stats()
    assert "labels" not in stats and stats["documents"] == 0
    assert {s["graph"] for s in sources} <= set(stats["graphs"])
    assert stats["triples"] == sum(stats["graphs"].values())
    labelled = kg.stats(labels=True)["labels"]
    assert labelled and all(set(r) == {"graph", "lang", "count"} and r["count"] > 0 for r in labelled)
    assert {r["lang"] for r in labelled} >= {"he", "en"}

    assert kg.annotate(QUESTION, lang="he")  # the lexicon is built (and cached) here
    for s in sources:
        kg.drop_source(s["graph"])
    assert kg.sources() == []
    assert kg.annotate(QUESTION, lang="he") == []  # a cached lexicon would still find them
    with pytest.raises(NotFoundError, match="no loaded source"):
        kg.drop_source(sources[0]["graph"])


def test_index_reports_the_total_then_each_document(tmp_path: Path) -> None:
    kg = demo()
    for i in range(3):
        (tmp_path / f"d{i}.txt").write_text(f"{QUESTION} {i}\n", encoding="utf-8")
    events: list[tuple[str, int]] = []
    rep = kg.index([tmp_path], lang="he", progress=lambda n: events.append(("step", n)),
                   total=lambda n: events.append(("total", n)))
    assert rep.documents == 3
    assert events[0] == ("total", 3) and sorted(events[1:]) == [("step", 1)] * 3
    assert kg.stats()["documents"] == 3
    assert {d["lang"] for d in kg.documents()} == {"he"}


def test_describe_explains_or_says_what_the_store_has_about_a_resource() -> None:
    kg = demo()
    concept = kg.describe(BRANCH)
    rows = concept.summary["resource"]
    assert concept.root == BRANCH and rows and all(r["predicate"].startswith("http") for r in rows)
    asked = kg.ask(QUESTION, lang="he")
    assert "resource" not in kg.describe(asked.question_iri).summary  # an explanation proper
    with pytest.raises(NotFoundError, match="nothing to explain"):
        kg.describe(NOWHERE)
    with pytest.raises(InputError, match="not a valid IRI"):
        kg.describe("http://bad iri")


def test_raw_query_predeclares_the_prefixes_and_update_forgets_derived_data() -> None:
    kg = demo()
    body, media = kg.raw_query("ASK { GRAPH ?g { ?c a skos:Concept } }", "json")
    assert media.startswith("application/sparql-results+json") and b"true" in body
    assert kg.annotate(QUESTION, lang="he")
    for s in kg.sources():
        kg.update(f"DROP GRAPH <{s['graph']}>")
    assert kg.annotate(QUESTION, lang="he") == []


class _Handler:
    def embedded(self, engine: pyoxigraph.Store) -> Any:
        return ("embedded", engine)

    def remote(self, endpoint: str) -> Any:
        return ("remote", endpoint)


def test_each_store_picks_its_engine_method() -> None:
    emb = EmbeddedStore(":memory:")
    kind, engine = emb.on_engine(_Handler())
    assert kind == "embedded" and isinstance(engine, pyoxigraph.Store)
    remote = RemoteStore("http://127.0.0.1:9/query")
    assert remote.on_engine(_Handler()) == ("remote", "http://127.0.0.1:9/query")

    class Bare(EmbeddedStore):
        on_engine = Store.on_engine  # a store that offers no engine

    with pytest.raises(ConfigError, match="offers no engine"):
        Bare(":memory:").on_engine(_Handler())


def test_one_path_given_alone_is_one_path_not_its_characters(tmp_path: Path) -> None:
    """``index("/x/a.txt")`` once iterated the string: ``/`` first, walking the file system."""
    kg = demo()
    doc = tmp_path / "a.txt"
    doc.write_text("The rooster crows at dawn.", encoding="utf-8")
    assert kg.index(str(doc), lang="en").documents == 1
    assert kg.index(doc, lang="en").documents == 1
    assert kg.load(str(DEMO / "thesaurus.ttl"))[0] is not None
    with pytest.raises(InputError, match="paths must be"):
        kg.index(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(("question", "message"), [
    ("bank \ud800 river", "not UTF-8"), (None, "must be text"), (5, "must be text")])
def test_a_question_that_is_no_text_is_an_input_error(question: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        demo().ask(question)  # type: ignore[arg-type]


def test_open_without_create_leaves_nothing_at_a_mistyped_path(tmp_path: Path) -> None:
    from kg_rag.errors import StoreError
    from kg_rag.langchain import KgRagRetriever

    missing = tmp_path / "nope"
    with pytest.raises(StoreError, match="no store at"):
        KnowledgeGraph.open(str(missing), create=False)
    with pytest.raises(StoreError, match="no store at"):
        KgRagRetriever(path=str(missing)).invoke("bank")
    assert not missing.exists()


def test_a_string_that_is_no_iri_is_an_input_error() -> None:
    kg = demo()
    with pytest.raises(InputError, match="not a valid IRI"):
        kg.explain("http://a b")
    with pytest.raises(InputError, match="not a valid IRI"):
        kg.labels([BRANCH, "bad iri"], "en")
    assert kg.labels(BRANCH, "en") == kg.labels([BRANCH], "en") != {}
