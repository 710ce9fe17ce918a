"""The LangChain adapter on the real demo store: LangChain's standard retriever tests, metadata,
async without blocking the event loop, answer_chain with a fake chat model, no LangChain import
from the core package, and the README's LangChain snippet run as written."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="needs the langchain extra (langchain-core)")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.runnables import ConfigurableField  # noqa: E402
from langchain_tests.integration_tests import RetrieversIntegrationTests  # noqa: E402

from kg_rag import WsdMode  # noqa: E402
from kg_rag.api import KnowledgeGraph  # noqa: E402
from kg_rag.errors import InputError  # noqa: E402
from kg_rag.langchain import KgRagRetriever, answer_chain, format_passages  # noqa: E402
from kg_rag.resources import resource_path  # noqa: E402
from tests.support.paths import ROOT

C = "https://w3id.org/kg-rag/demo/concept/"
BAD = "הפירות העמיסו על הבדים"


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo store, built once through the API in a temporary folder.

    Built through the knowledge graph that retrievers on this path share, and kept open for the
    session, so that the tests do not pay for opening and warming it up again."""
    path = str(tmp_path_factory.mktemp("kg") / "demo-store")
    # the retriever only reads (a mistyped path is no new store), so the store is built first
    built = KnowledgeGraph.open(path)
    demo = resource_path("demo")
    built.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
    built.index([demo / "documents"])
    built.close()
    del built
    gc.collect()   # the engine releases the folder when the last reference goes
    kg = KgRagRetriever(path=path).graph
    assert isinstance(kg, KnowledgeGraph)
    yield path
    del kg


class TestStandardRetriever(RetrieversIntegrationTests):
    """LangChain's own checks (langchain-tests) against the retriever on the demo store."""

    pytestmark = pytest.mark.anyio  # runs the standard async test on asyncio (anyio's plugin)

    _store = ""

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    @pytest.fixture(autouse=True)
    def _use_demo_store(self, demo_store: str) -> None:
        type(self)._store = demo_store

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return KgRagRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"path": self._store, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return BAD


@pytest.fixture
def retriever(demo_store: str) -> KgRagRetriever:
    return KgRagRetriever(path=demo_store, k=3)


def test_min_score_leaves_out_documents_below_that_relevance(demo_store: str) -> None:
    every = KgRagRetriever(path=demo_store, k=50).invoke(BAD)
    rel = sorted(d.metadata["relevance"] for d in every)
    assert all(0 <= r <= 1 for r in rel) and rel[0] < rel[-1]
    cut = rel[len(rel) // 2]
    kept = KgRagRetriever(path=demo_store, k=50, min_score=cut).invoke(BAD)
    assert [d.id for d in kept] == [d.id for d in every if d.metadata["relevance"] >= cut]
    # per call, as LangChain passes options
    assert len(KgRagRetriever(path=demo_store, k=50).invoke(BAD, min_score=cut)) == len(kept)
    assert KgRagRetriever(path=demo_store, min_score=1.0).invoke(BAD) == []
    with pytest.raises(InputError, match="'min_score' must be a number between 0 and 1"):
        KgRagRetriever(path=demo_store, min_score=1.5)


def test_documents_carry_passages_and_evidence(retriever: KgRagRetriever, demo_store: str) -> None:
    docs = retriever.invoke(BAD)
    assert len(docs) == 3
    for d in docs:
        md = d.metadata
        assert d.page_content and d.page_content in _doc_text(retriever, md["doc_id"])
        assert d.id == md["doc_id"]
        assert md["doc_iri"].startswith("https://w3id.org/kg-rag/id/doc/")
        assert isinstance(md["score"], float) and md["score"] > 0
        assert md["lang"] in {"he", "en", "de", "fr", "ar"} and md["title"]
        assert md["concepts"] and all(set(c) >= {"iri", "label"} for c in md["concepts"])
        assert md["question_iri"].startswith("https://w3id.org/kg-rag/id/question/")
        assert Path(md["store"]).resolve() == Path(demo_store).resolve()
        assert md["wsd"] == "knowledge"
        json.dumps(md, ensure_ascii=False)  # metadata is plain JSON
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    # the decision for הבדים is the same on every document; its IRI is a recorded decision
    (sense,) = [s for s in docs[0].metadata["chosen_senses"] if s["mention"] == "הבדים"]
    assert sense["candidates"] and sense["decision"].startswith(
        "https://w3id.org/kg-rag/id/decision/"
    )
    assert sense["concept"] in {C + "branch", C + "fabric"}
    assert sense["decision"] in docs[0].metadata["decisions"]
    for d in docs:  # a document matched by the decided concept names the decision
        if sense["concept"] in {c["iri"] for c in d.metadata["concepts"]}:
            assert sense["decision"] in d.metadata["decisions"]
    from pyoxigraph import NamedNode

    rows = retriever.graph.store.select(
        "select-decisions", bind={"decision": NamedNode(sense["decision"])}
    )
    assert {r["chosenConcept"].value for r in rows} == {sense["concept"]}
    explained = retriever.graph.explain(docs[0].metadata["question_iri"]).text()
    assert "הבדים" in explained


def _doc_text(r: KgRagRetriever, doc_id: str) -> str:
    rows = r.graph.store.select("select-documents")
    assert any(row["id"].value == doc_id for row in rows)
    docs = {d.id: d.text for d in _demo_docs()}
    return docs[doc_id]


def _demo_docs() -> list[Any]:
    from kg_rag.documents import read_documents

    return read_documents([resource_path("demo") / "documents"], 1_000_000)


BRANCH_TEXTS = {
    "he-olive-grove",
    "orchard-calendar",
    "en-pruning-fruit-trees",
    "he-poem-fig",
    "de-obstbaeume",
    "fr-verger",
}
FABRIC_TEXTS = {"he-sewing-fabric", "en-cotton-fabric", "de-stoff-naehen"}


def test_documents_follow_the_chosen_sense_ahead_of_the_other(retriever: KgRagRetriever) -> None:
    """The rejected reading's texts are not dropped (a wrong decision must not hide documents),
    but every text of the chosen reading ranks ahead of every text of the rejected one, which
    label matching does not do: there the Hebrew fabric text shares the word and ranks 5th."""
    docs = retriever.invoke(BAD, k=10)
    chosen = {s["concept"] for s in docs[0].metadata["chosen_senses"] if s["mention"] == "הבדים"}
    assert chosen == {C + "branch"}
    ids = [d.metadata["doc_id"] for d in docs]
    assert BRANCH_TEXTS <= set(ids)
    last_branch = max(ids.index(i) for i in BRANCH_TEXTS)
    assert all(ids.index(i) > last_branch for i in FABRIC_TEXTS if i in ids), ids
    labels = [d.metadata["doc_id"] for d in retriever.invoke(BAD, wsd="none", k=10)]
    assert labels.index("he-sewing-fabric") < max(labels.index(i) for i in BRANCH_TEXTS), labels


def test_invoke_options_override_fields(retriever: KgRagRetriever) -> None:
    assert len(retriever.invoke("Which branch of the bank is open?", k=1, language="en")) == 1
    none = retriever.invoke(BAD, wsd="none", k=3)
    assert none and all(d.metadata["wsd"] == "none" for d in none)
    assert all(not d.metadata["chosen_senses"] for d in none)
    with pytest.raises(InputError, match="unknown retriever option"):
        retriever.invoke(BAD, top_k=2)
    with pytest.raises(InputError, match="k must be"):
        retriever.invoke(BAD, k=0)
    with pytest.raises(InputError, match="sense selection mode"):
        retriever.invoke(BAD, wsd="magic")
    with pytest.raises(InputError, match="focus must be"):
        retriever.invoke(BAD, focus=17.5)
    focused = retriever.invoke(BAD, focus=[17, 22])
    assert focused and focused[0].metadata["chosen_senses"][0]["start"] == 17
    by_word = retriever.invoke(BAD, focus="הבדים")  # the word itself, as the CLI's --focus
    assert [d.metadata["doc_id"] for d in by_word] == [d.metadata["doc_id"] for d in focused]


@pytest.mark.parametrize("options,message", [
    ({"k": 0}, "k must be an integer between 1 and 1000"),
    ({"k": -3}, "k must be an integer between 1 and 1000"),
    ({"k": 1001}, "k must be an integer between 1 and 1000"),
    ({"k": "three"}, "k must be an integer between 1 and 1000"),
    ({"k": True}, "k must be an integer between 1 and 1000"),       # as invoke(k=…) and ask()
    ({"k": 2.5}, "k must be an integer between 1 and 1000"),
    ({"min_score": 1.5}, "'min_score' must be a number between 0 and 1"),
    ({"min_score": "high"}, "'min_score' must be a number between 0 and 1"),
    ({"wsd": "guess"}, "unknown sense selection mode 'guess'"),
    ({"wsd": 5}, "unknown sense selection mode 5"),
    ({"expansion": {"broader": 2.0}}, "expansion weight 'broader': 2.0 is not a number from 0 to 1"),
    ({"expansion": {"brodaer": 0.5}}, "unknown expansion relation"),
    ({"expansion": ["broader"]}, "retriever option 'expansion': input should be a valid dictionary"),
    ({"language": 3}, "retriever option 'language': input should be a valid string"),
    ({"endpoint": "http://127.0.0.1:1/sparql", "update_endpoint": 7},
     "retriever option 'update_endpoint': input should be a valid string"),
    ({"knowledge_graph": "demo-store"},
     "retriever option 'knowledge_graph': input should be an instance of KnowledgeGraph"),
    ({"endpoint": "http://127.0.0.1:1/sparql"},
     "give only one of path, endpoint, knowledge_graph (got path, endpoint)"),
])
def test_bad_options_are_one_line_input_errors_naming_the_option(
        demo_store: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        KgRagRetriever(path=demo_store, **options)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text and "pydantic" not in text, text


@pytest.mark.parametrize("options,message", [
    ({"top_k": 3}, "unknown retriever option 'top_k'"),
    ({"kk": 3, "colour": "red"}, "unknown retriever options 'colour', 'kk'"),
])
def test_an_unknown_option_is_a_one_line_input_error_naming_it(
        demo_store: str, options: dict[str, Any], message: str) -> None:
    # as invoke(top_k=3) is: BaseRetriever's config ignores extra keywords
    for make in (lambda: KgRagRetriever(path=demo_store, **options),
                 lambda: KgRagRetriever.model_validate({"path": demo_store, **options})):
        with pytest.raises(InputError) as caught:
            make()
        text = str(caught.value)
        assert text.startswith(message + "; use ") and "\n" not in text, text
        assert "path" in text and "k," in text and "pydantic" not in text, text


def test_langchains_own_constructor_options_are_kept(demo_store: str) -> None:
    r = KgRagRetriever(path=demo_store, k=2, name="kg", tags=["t"], metadata={"m": 1})
    assert (r.name, r.tags, r.metadata) == ("kg", ["t"], {"m": 1})
    # with_config and configurable fields (which build a new retriever from the model's fields)
    configurable = r.with_config(tags=["u"]).bound.configurable_fields(
        k=ConfigurableField(id="k"))
    docs = configurable.invoke(BAD, config={"configurable": {"k": 1}})
    assert len(docs) == 1


def test_the_store_options_and_model_validate_raise_input_errors_too(demo_store: str) -> None:
    with pytest.raises(InputError, match="^update_endpoint needs endpoint$"):
        KgRagRetriever(update_endpoint="http://127.0.0.1:1/update")
    with pytest.raises(InputError, match="^retriever option 'path': input should be a valid string$"):
        KgRagRetriever.model_validate({"path": 5})
    with pytest.raises(InputError, match="^k must be"):
        KgRagRetriever.model_validate({"path": demo_store, "k": 0})


def test_good_options_are_kept(demo_store: str) -> None:
    r = KgRagRetriever(path=demo_store, k=1000, min_score=0, wsd="first-sense", language="he",
                       expansion={"broader": 0.5})
    assert (r.k, r.min_score, r.wsd, r.expansion) == (1000, 0.0, WsdMode.FIRST_SENSE,
                                                     {"broader": 0.5})


def test_retrievers_on_one_store_share_it_and_an_open_graph_can_be_given(demo_store: str) -> None:
    a, b = KgRagRetriever(path=demo_store), KgRagRetriever(path=demo_store + "/")
    assert a.graph is b.graph
    c = KgRagRetriever(knowledge_graph=a.graph, k=2)
    assert [d.metadata["doc_id"] for d in c.invoke(BAD)] == [
        d.metadata["doc_id"] for d in a.invoke(BAD, k=2)
    ]


def test_expansion_weights_change_the_ranking(retriever: KgRagRetriever, demo_store: str) -> None:
    wide = retriever.invoke(BAD, k=20)
    narrow = KgRagRetriever(path=demo_store, k=20, expansion={}).invoke(BAD)
    assert len(narrow) < len(wide)
    assert {d.metadata["doc_id"] for d in narrow} < {d.metadata["doc_id"] for d in wide}


def test_unknown_question_gives_no_documents_and_bad_input_raises(retriever: KgRagRetriever) -> None:
    assert retriever.invoke("qwertyuiop zxcvbnm") == []
    assert "no known concept" in retriever.ask("qwertyuiop zxcvbnm").reason
    with pytest.raises(InputError, match="empty"):
        retriever.invoke("   ")
    with pytest.raises(InputError, match="unknown retriever option"):
        retriever.invoke(BAD, colour="red")


def test_async_does_not_block_the_event_loop(
    retriever: KgRagRetriever, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_ask = retriever.graph.ask

    def ask(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.4)  # a slow store or LLM call
        return slow_ask(*args, **kwargs)

    monkeypatch.setattr(retriever.graph, "ask", ask)

    async def main() -> tuple[list[Document], int]:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.create_task(ticker())
        docs = await retriever.ainvoke(BAD)
        done.set()
        await t
        return docs, ticks

    docs, ticks = asyncio.run(main())
    assert len(docs) == 3
    assert ticks >= 15  # the loop kept running while the question was answered in a thread


def test_concurrent_async_calls_give_the_same_answers(retriever: KgRagRetriever) -> None:
    questions = [BAD, "שמירה על הבר עמדה במוקד עיסוקיו", "Warum kräht der Hahn vor Sonnenaufgang?"]
    sync = [[d.metadata["doc_id"] for d in retriever.invoke(q)] for q in questions]

    async def main() -> list[list[Document]]:
        return list(await asyncio.gather(*(retriever.ainvoke(q) for q in questions)))

    got = [[d.metadata["doc_id"] for d in docs] for docs in asyncio.run(main())]
    assert got == sync


# --- answer_chain ---------------------------------------------------------------------------


def test_answer_chain_maps_citations_to_documents(retriever: KgRagRetriever) -> None:
    llm = FakeListChatModel(
        responses=["The fruit weighed down the branches [2], as in [1][2]; see also [9]."]
    )
    out = answer_chain(llm, retriever).invoke(BAD)
    docs = out["documents"]
    assert out["question"] == BAD and len(docs) == 3 and all(isinstance(d, Document) for d in docs)
    assert out["answer"].startswith("The fruit weighed down")
    assert [c["n"] for c in out["citations"]] == [2, 1]
    assert [c["doc_id"] for c in out["citations"]] == [
        docs[1].metadata["doc_id"],
        docs[0].metadata["doc_id"],
    ]
    assert out["invalid_citations"] == [9]


def test_answer_chain_prompt_has_numbered_passages_and_chosen_senses(
    retriever: KgRagRetriever,
) -> None:
    seen: list[Any] = []

    class Recording(FakeListChatModel):
        def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
            seen.append(messages)
            return super()._call(messages, *args, **kwargs)

    out = answer_chain(Recording(responses=["ok [1]"]), retriever).invoke({"question": BAD})
    (messages,) = seen
    prompt = messages[-1].content
    assert "[1] (" in prompt and "[3] (" in prompt and "[4] (" not in prompt
    assert out["documents"][0].page_content in prompt
    chosen = out["documents"][0].metadata["chosen_senses"]
    assert '"הבדים" means:' in prompt and chosen[0]["concept"] in prompt
    assert BAD in prompt and "SELECT" not in prompt  # no SPARQL is written by or for the model


def test_answer_chain_async(retriever: KgRagRetriever) -> None:
    llm = FakeListChatModel(responses=["Guarding the wilderness [1]."])
    out = asyncio.run(answer_chain(llm, retriever).ainvoke("שמירה על הבר עמדה במוקד עיסוקיו"))
    assert out["citations"][0]["doc_id"] == out["documents"][0].metadata["doc_id"]


def test_answer_chain_rejects_other_input(retriever: KgRagRetriever) -> None:
    with pytest.raises(InputError, match="question"):
        answer_chain(FakeListChatModel(responses=["x"]), retriever).invoke({"q": 1})


def test_format_passages_without_documents() -> None:
    assert format_passages([]) == "(no passages were found)"


# --- packaging --------------------------------------------------------------------------------


def test_core_package_does_not_import_langchain() -> None:
    code = (
        "import sys, kg_rag, kg_rag.api, kg_rag.cli; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('langchain', 'langchain_core')); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert r.returncode == 0, r.stdout + r.stderr


def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## LangChain", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    return code


def test_readme_langchain_snippet_runs_as_written(
    demo_store: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = _readme_snippet()
    assert 'path="demo-store"' in code  # the store `make demo` builds
    (tmp_path / "demo-store").symlink_to(demo_store)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out
    assert out.strip(), "the snippet prints the retrieved documents"
    assert "הבדים" in out


# --- a remote store -----------------------------------------------------------------------------


def test_retriever_on_a_remote_store(tmp_path: Path) -> None:
    """Same retriever over SPARQL 1.1 (a real `oxigraph serve` on loopback)."""
    from kg_rag.documents import read_documents
    from tests.support.oxigraph_server import oxigraph_binary, oxigraph_server

    if oxigraph_binary() is None:
        pytest.skip("needs the oxigraph server CLI (pip install oxigraph)")
    demo = resource_path("demo")
    wanted = ("he-olive-grove", "he-poem-fig", "he-sewing-fabric", "he-bar-tel-aviv")
    with oxigraph_server(tmp_path / "remote") as url:
        update = url.rsplit("/", 1)[0] + "/update"
        retriever = KgRagRetriever(endpoint=url, update_endpoint=update, k=3)
        kg = retriever.graph
        kg.load([demo / "thesaurus.ttl", demo / "dictionary.ttl"])
        kg.index_documents(
            [d for d in read_documents([demo / "documents"], 1_000_000) if d.id in wanted]
        )
        docs = retriever.invoke(BAD)
        ids = [d.metadata["doc_id"] for d in docs]
        # the branch texts first; the fabric text, which shares only the word, after them
        assert set(ids[:2]) == {"he-olive-grove", "he-poem-fig"}, ids
        assert set(ids[2:]) <= {"he-sewing-fabric"}, ids
        assert all(d.metadata["store"] == url for d in docs)
        assert asyncio.run(retriever.ainvoke(BAD))[0].metadata["doc_id"] == ids[0]
        del retriever, kg
