"""``redecide``: stored decisions of indexed documents re-decided by the real ``openai`` client
against the loopback server — each new decision a PROV-O activity revising the old one, the
annotations re-pointed in the same update, retrieval following at once; ``--below``,
``--limit``, ``--dry-run``, an unusable answer, a provider that goes down, and a ``kill -9``
mid-run that the next run resumes."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError, NotFoundError, SelectionError
from kg_rag.namespaces import KGR, PROV
from kg_rag.resources import resource_path
from kg_rag.senses.llm.prompt import prompt_sha256
from kg_rag.settings import Settings
from kg_rag.store import EmbeddedStore, open_store
from tests.support.llm_server import KEY, LlmServer, Reply, answer, choose, llm_env, mention_blocks

DEMO = resource_path("demo")
CLI = "import sys; from kg_rag.cli import main; sys.exit(main(sys.argv[1:]))"
#: Hebrew documents whose בד / גבר / בר the knowledge selector decides, and one English one
DOCS = ("he-poem-fig", "he-olive-grove", "he-sewing-fabric", "he-rooster-talmud", "en-river-bank")
#: the scripted model's (wrong, so that the change shows) choice: the fabric reading of בד
FABRIC = {"בדיו": "weaving", "בדים": "weaving", "כבדים": "weaving"}


def corpus(tmp: Path, ids: tuple[str, ...] = DOCS) -> Path:
    rows = [json.loads(line) for line in (DEMO / "documents" / "corpus.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    keep = [r for r in rows if r["id"] in ids]
    assert len(keep) == len(ids)
    path = tmp / "docs.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep), encoding="utf-8")
    return path


def open_kg(srv: LlmServer | None, path: str = ":memory:", **kw: object) -> KnowledgeGraph:
    cfg = Settings(llm_api_key=KEY, llm_model="test-model", llm_timeout=5.0,
                   llm_base_url=srv.url if srv else "http://127.0.0.1:9/v1").with_(**kw)
    store = EmbeddedStore(":memory:") if path == ":memory:" else open_store(path)
    return KnowledgeGraph(store, cfg)


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[KnowledgeGraph]:
    """The demo vocabularies and five documents, indexed with the knowledge selector."""
    kg = open_kg(None)
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    kg.index([corpus(tmp_path)], wsd="knowledge")
    yield kg
    kg.close()


def with_server(kg: KnowledgeGraph, srv: LlmServer, **kw: object) -> KnowledgeGraph:
    """``kg``'s store with settings pointing at ``srv`` (the same in-memory store)."""
    base = Settings(llm_api_key=KEY, llm_model="test-model", llm_timeout=5.0, llm_base_url=srv.url)
    return KnowledgeGraph(kg.store, base.with_(**kw))


def triples(kg: KnowledgeGraph, iri: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in kg.store.construct("construct-resource", bind={"root": NamedNode(iri)}):
        out.setdefault(t.predicate.value, []).append(str(getattr(t.object, "value", t.object)))
    return out


def annotations(kg: KnowledgeGraph, doc_id: str) -> dict[tuple[int, int], dict[str, object]]:
    return {(a["start"], a["end"]): a for a in kg.document(doc_id)["annotations"]}


def fabric_agreement(kg: KnowledgeGraph, doc_id: str) -> float:
    """How much the document's annotations agree with *fabric*, as retrieval counts it."""
    a = kg.ask("fabric", lang="en", wsd="knowledge", record_question=False, k=50)
    for r in a.results:
        if r.doc_id == doc_id:
            return sum(c.document_agreement for c in r.contributions
                       if c.document_concept.endswith("/fabric"))
    return 0.0


def test_llm_revises_decisions_repoints_annotations_and_retrieval_follows(indexed: KnowledgeGraph) -> None:
    before = annotations(indexed, "he-poem-fig")
    agreement_before = fabric_agreement(indexed, "he-poem-fig")
    with LlmServer(choose(FABRIC)) as srv:
        kg = with_server(indexed, srv)
        rep = kg.redecide("llm", documents=["he-poem-fig"])
        sent = list(srv.chat_requests)
        usages = list(srv.usages)
    assert rep.documents == 1 and rep.written_documents == 1 and rep.redecided >= 2
    assert len(sent) == 1 == rep.llm_calls                     # the document's mentions, one request
    blocks = mention_blocks(sent[0].user)
    assert sorted(b[0] for b in blocks.values()) == sorted(i.text for i in rep.items)
    changed = [i for i in rep.items if i.changed]
    assert changed and all(i.new_concept.endswith("/fabric") for i in changed)  # type: ignore[union-attr]
    assert all(i.old_concept.endswith("/branch") for i in changed)  # type: ignore[union-attr]

    after = annotations(kg, "he-poem-fig")
    for item in rep.items:
        span = (item.start, item.end)
        assert before[span]["decision"] == item.previous
        assert after[span]["decision"] == item.decision != item.previous
        assert [c["concept"] for c in after[span]["chosen"]] == [item.new_concept]  # type: ignore[index, union-attr]
        new = triples(kg, item.decision)
        assert new[KGR.revisionOf.value] == [item.previous]
        assert new[PROV.wasInformedBy.value] == [item.previous]
        assert new[KGR.promptSha256.value] == [prompt_sha256(sent[0].body["messages"])]
        assert new[KGR.tokensIn.value] == [str(usages[0]["prompt_tokens"])]
        assert new[KGR.promptTemplate.value] == ["wsd-v1"]
        agent = triples(kg, new[PROV.wasAssociatedWith.value][0])
        assert agent[KGR.model.value] == ["test-model"]
        old = triples(kg, item.previous)                     # the old decision is kept, unchanged
        assert old[KGR.chosenConcept.value] == [item.old_concept]
        assert KGR.revisionOf.value not in old
    explained = kg.explain(changed[0].decision)
    assert f"revises <{changed[0].previous}>" in explained.text()
    assert explained.summary["mentions"][0]["decision"]["revision_of"] == changed[0].previous
    # retrieval reads the new decisions at once
    assert fabric_agreement(kg, "he-poem-fig") > agreement_before + 0.5

    # running again asks nothing: every decision is already the llm selector's
    with LlmServer(choose(FABRIC)) as srv:
        again = with_server(indexed, srv).redecide("llm", documents=["he-poem-fig"])
        assert srv.chat_requests == []
    assert again.redecided == 0 and again.current == rep.redecided

    # indexing the document again with the knowledge selector keeps the upgrade, asking nobody
    kg.index_documents([d for d in _documents(kg) if d.id == "he-poem-fig"], wsd="knowledge")
    assert {s: a["decision"] for s, a in annotations(kg, "he-poem-fig").items()} == \
        {s: a["decision"] for s, a in after.items()}

    from kg_rag.pipeline.shapes import validate

    conforms, text = validate(kg.store)
    assert conforms, text


def _documents(kg: KnowledgeGraph) -> list[object]:
    from kg_rag.documents import SourceDocument

    out = []
    for d in kg.documents():
        rec = kg.document(d["id"])
        out.append(SourceDocument(id=rec["id"], text=rec["text"], lang=rec["lang"],
                                  title=rec["title"]))
    return out


def test_below_and_limit_choose_what_goes_to_the_model(indexed: KnowledgeGraph) -> None:
    with LlmServer(choose(FABRIC)) as srv:
        kg = with_server(indexed, srv)
        dry = kg.redecide("llm", dry_run=True)
        asked_all = sum(len(mention_blocks(r.user)) for r in srv.chat_requests)
        assert asked_all == dry.eligible == dry.redecided == dry.decisions > 3
        probs = sorted(i.old_probability for i in dry.items if i.old_probability is not None)
        cut = probs[len(probs) // 2]
        n = len(srv.chat_requests)
        low = kg.redecide("llm", below=cut, dry_run=True)
        asked = sum(len(mention_blocks(r.user)) for r in srv.chat_requests[n:])
        assert asked == low.redecided == sum(1 for p in probs if p < cut) > 0
        assert low.confident == dry.decisions - low.redecided
        assert all(i.old_probability is not None and i.old_probability < cut for i in low.items)

        n = len(srv.chat_requests)
        one = kg.redecide("llm", limit=1)
        assert one.redecided == 1 and one.limited and one.written_documents == 1
        assert sum(len(mention_blocks(r.user)) for r in srv.chat_requests[n:]) == 1
        rest = kg.redecide("llm")
        assert rest.current == 1 and rest.redecided == dry.redecided - 1 and not rest.limited


def test_dry_run_writes_nothing(indexed: KnowledgeGraph) -> None:
    stats = indexed.stats()
    with LlmServer(choose(FABRIC)) as srv:
        rep = with_server(indexed, srv).redecide("llm", dry_run=True)
        assert srv.chat_requests
    assert rep.dry_run and rep.changed > 0 and rep.written_documents == 0
    assert not any(i.written for i in rep.items)
    assert indexed.stats() == stats


def test_an_unusable_answer_keeps_the_old_decision(indexed: KnowledgeGraph) -> None:
    before = annotations(indexed, "he-rooster-talmud")
    stats = indexed.stats()
    with LlmServer(answer(("M1", "S9"))) as srv:                 # an id outside the candidates
        rep = with_server(indexed, srv).redecide("llm", documents=["he-rooster-talmud"])
        assert len(srv.chat_requests) == 2                       # the request and its one retry
    assert rep.redecided == 0 and len(rep.kept) >= 1 and "S9" in rep.kept[0].reason
    assert annotations(indexed, "he-rooster-talmud") == before
    assert indexed.stats() == stats


def test_a_provider_that_goes_down_stops_the_run_and_the_next_one_resumes(indexed: KnowledgeGraph) -> None:
    ok = choose(FABRIC)
    with LlmServer([ok, Reply(status=500)]) as srv:
        kg = with_server(indexed, srv, llm_retries=0)
        with pytest.raises(SelectionError, match=r"1 documents re-decided before it are kept"):
            kg.redecide("llm", batch=1)                          # a request per document
        assert len(srv.chat_requests) == 2
    first_doc = sorted(DOCS)[0]
    with LlmServer(ok) as srv:
        rep = with_server(indexed, srv).redecide("llm")
    assert rep.current >= 1 and rep.redecided > 0
    assert not any(i.doc_id == first_doc for i in rep.items)       # done before: not asked again


def test_bad_options_write_nothing(indexed: KnowledgeGraph) -> None:
    with pytest.raises(InputError, match="below"):
        indexed.redecide("first-sense", below=1.5)
    with pytest.raises(InputError, match="limit"):
        indexed.redecide("first-sense", limit=0)
    with pytest.raises(InputError, match="label matching"):
        indexed.redecide("none")
    stats = indexed.stats()
    with pytest.raises(NotFoundError, match="no-such-doc"):
        indexed.redecide("first-sense", documents=["he-poem-fig", "no-such-doc"])
    assert indexed.stats() == stats


def test_forgetting_questions_keeps_a_revised_decisions_history(indexed: KnowledgeGraph) -> None:
    rep = indexed.redecide("first-sense", documents=["he-poem-fig"])
    item = next(i for i in rep.items if i.changed)
    indexed.store.run_update("delete-unused-decisions")      # the old one is used by nobody now
    assert triples(indexed, item.previous)[KGR.chosenConcept.value] == [item.old_concept]
    assert triples(indexed, item.decision)[KGR.revisionOf.value] == [item.previous]


def run_cli(store: Path, srv: LlmServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_RAG_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-c", CLI, "--store", str(store), *args],
                          env=env | llm_env(srv), capture_output=True, text=True, timeout=180)


def test_cli_killed_mid_run_loses_nothing_and_resumes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with KnowledgeGraph(open_store(str(store)), Settings(store=str(store))) as kg:
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
        kg.index([corpus(tmp_path)], wsd="knowledge")
    del kg
    gc.collect()  # the store's lock goes with the last reference
    slow = choose(FABRIC)

    def slowly(body: dict[str, object]) -> Reply:
        reply = slow(body)
        reply.delay = 0.6
        return reply

    with LlmServer(slowly) as srv:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KG_RAG_", "OPENAI_"))}
        proc = subprocess.Popen([sys.executable, "-c", CLI, "--store", str(store), "redecide",
                                 "--wsd", "llm", "--batch", "1", "--json"], env=env | llm_env(srv),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while len(srv.chat_requests) < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1].decode()
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)                       # mid-run, mid-request
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        asked_before = len(srv.chat_requests)
        assert asked_before >= 3

        done = run_cli(store, srv, "redecide", "--wsd", "llm", "--json")
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["current"] >= 1                               # what the killed run wrote stands
        assert out["redecided"] > 0 and out["kept"] == []
        final = run_cli(store, srv, "redecide", "--wsd", "llm", "--json")
        assert json.loads(final.stdout)["redecided"] == 0
        asked = len(srv.chat_requests)
        text = run_cli(store, srv, "redecide", "--wsd", "llm")
        assert len(srv.chat_requests) == asked
    assert text.returncode == 0 and "already decided by llm" in text.stdout
    with KnowledgeGraph(open_store(str(store)), Settings(store=str(store))) as kg:
        assert kg.store.select("select-annotation-without-decision-violation") == []
        decided = [a for d in DOCS for a in kg.document(d)["annotations"] if a["decision"]]
        assert decided and all(
            triples(kg, a["decision"]).get(KGR.revisionOf.value) for a in decided)


@pytest.mark.parametrize("mode", ["knowledge+llm", "llm,knowledge"])
def test_a_composite_selector_whose_model_fails_writes_no_upgrade(indexed: KnowledgeGraph,
                                                                  mode: str) -> None:
    stats = indexed.stats()
    with LlmServer(Reply(status=503)) as srv:
        kg = with_server(indexed, srv, llm_retries=0, llm_threshold=1.0)
        rep = kg.redecide(mode, documents=["he-poem-fig"])
        assert srv.chat_requests                                  # the model was asked
    assert rep.redecided == 0 and rep.kept and all("503" in k.reason for k in rep.kept)
    assert indexed.stats() == stats                               # nothing written
    with LlmServer(choose(FABRIC)) as srv:                        # the model is back: asked again
        rep = with_server(indexed, srv, llm_threshold=1.0).redecide(mode, documents=["he-poem-fig"])
        assert srv.chat_requests
    assert rep.redecided >= 2 and all(i.selector == "llm" and i.written for i in rep.items)


def test_cli_bad_input_is_one_line_and_writes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    from kg_rag.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--store", ":memory:", "redecide", "--below", "1.5"])
    assert exc.value.code == 2 and "outside 0..1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--store", ":memory:", "redecide", "--limit", "0"])
    assert exc.value.code == 2 and "below 1" in capsys.readouterr().err
    code = main(["--store", ":memory:", "redecide", "--wsd", "first-sense", "--document", "nope"])
    err = capsys.readouterr().err
    assert code == NotFoundError.exit_code and err.count("\n") == 1
    assert "no indexed document has the id 'nope'" in err
    code = main(["--store", ":memory:", "redecide", "--wsd", "none"])
    err = capsys.readouterr().err
    assert code == InputError.exit_code and "label matching" in err and err.count("\n") == 1


def test_mentions_of_several_documents_share_a_request_and_each_document_its_write(
        indexed: KnowledgeGraph) -> None:
    with LlmServer(choose(FABRIC)) as srv:
        kg = with_server(indexed, srv)
        one_by_one = kg.redecide("llm", dry_run=True, batch=1)
        per_doc = len(srv.chat_requests)
        n = len(srv.chat_requests)
        rep = kg.redecide("llm")                                   # batch 16: all in one call
        batched = len(srv.chat_requests) - n
    docs = {i.doc_id for i in one_by_one.items}
    assert per_doc == len(docs) > 1 and batched == 1 == rep.llm_calls
    assert rep.redecided == one_by_one.redecided and rep.written_documents == len(docs)
    assert {i.doc_id for i in rep.items if i.written} == docs


def test_each_documents_write_describes_its_selector_once(indexed: KnowledgeGraph,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from pyoxigraph import Quad

    from kg_rag.namespaces import RDF

    sent: list[list[Quad]] = []
    apply = indexed.store.apply

    def spy(change: object) -> None:
        sent.append(list(getattr(change, "insert", [])))
        apply(change)  # type: ignore[arg-type]

    monkeypatch.setattr(indexed.store, "apply", spy)
    with LlmServer(choose(FABRIC)) as srv:
        rep = with_server(indexed, srv).redecide("llm", documents=["he-poem-fig"])
    assert rep.written_documents == 1 and rep.redecided >= 2
    writes = [w for w in sent if any(q.predicate == KGR.revisionOf for q in w)]
    assert len(writes) == 1
    described = [q for q in writes[0] if q.predicate == RDF.type and q.object == PROV.SoftwareAgent]
    assert len(described) == 1                      # the llm selector, once for its decisions
    decisions = {q.subject for q in writes[0] if q.predicate == KGR.revisionOf}
    assert len(decisions) == rep.redecided
    assert all(any(q.subject == d and q.predicate == PROV.wasAssociatedWith
                   and q.object == described[0].subject for q in writes[0]) for d in decisions)
