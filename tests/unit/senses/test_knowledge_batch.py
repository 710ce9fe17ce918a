"""Batching in the knowledge selector changes nothing but the time it takes.

On the bundled demo (a real store: thesaurus + dictionary, documents and questions annotated by
the real annotator): every ambiguous mention of a text decided in ONE ``select`` gets the scores
it gets alone; the per-batch memo of ``_prepare`` gives each request the seeds and context it
gets without one; the vectorised PPR equals a dense power iteration.

(On WordNet the two paths can differ slightly: a batch's PPR runs on the union of its requests'
2-hop neighbourhoods — ``KnowledgeSelectorConfig.ppr_batch`` — which on the demo's small graph is
the same subgraph as each request's own. bench/ANALYSIS.md measures the WordNet case.)"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.model import SelectionRequest
from kg_rag.pipeline.evidence import fetch_evidence
from kg_rag.resources import resource_path
from kg_rag.senses.knowledge.config import KnowledgeSelectorConfig
from kg_rag.senses.knowledge.graph import KnowledgeBase
from kg_rag.senses.knowledge.selector import KnowledgeSelector, _BatchMemo
from kg_rag.store import EmbeddedStore

DEMO = resource_path("demo")


@pytest.fixture(scope="module")
def demo() -> tuple[KnowledgeGraph, list[list[SelectionRequest]]]:
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
    texts = [(d["text"], d.get("lang") or "he") for d in map(json.loads, (
        DEMO / "documents" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()) if d.get("lang")]
    texts += [(q["text"], q.get("lang", "he")) for q in map(json.loads, (
        DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines())]
    batches = []
    for text, lang in texts:
        mentions = kg.annotator.annotate(text, lang)
        reqs = [SelectionRequest(m, text, lang, fetch_evidence(kg.store, m.candidates),
                                 tuple(o for o in mentions if o is not m))
                for m in mentions if m.ambiguous]
        if reqs:
            batches.append(reqs)
    assert sum(len(b) for b in batches) >= 30
    return kg, batches


def test_a_batch_decides_each_mention_as_it_is_decided_alone(
        demo: tuple[KnowledgeGraph, list[list[SelectionRequest]]]) -> None:
    """Without one sense per discourse every mention; with it (the default) every mention whose
    word (its candidates) occurs once in the text — the others are pooled on purpose
    (tests/unit/senses/test_discourse.py)."""
    kg, batches = demo
    several = pooled = 0
    for sel in (KnowledgeSelector(kg.store, KnowledgeSelectorConfig(discourse=0.0)),
                KnowledgeSelector(kg.store)):
        for reqs in batches:
            together = sel.select(reqs)
            words = Counter(tuple(sorted(c.id for c in r.mention.candidates)) for r in reqs)
            for req, sel_b in zip(reqs, together, strict=True):
                if sel.config.discourse and words[tuple(sorted(c.id for c in req.mention.candidates))] > 1:
                    pooled += 1
                    continue
                [alone] = sel.select([req])
                assert alone.chosen == sel_b.chosen
                assert dict(alone.scores) == pytest.approx(dict(sel_b.scores), abs=1e-6)
                assert alone.confidence == pytest.approx(sel_b.confidence, abs=1e-6)
            several += len(reqs) > 1
    assert several >= 10 and pooled >= 2


def test_the_batch_memo_gives_each_request_its_own_seeds_and_context(
        demo: tuple[KnowledgeGraph, list[list[SelectionRequest]]]) -> None:
    kg, batches = demo
    sel = KnowledgeSelector(kg.store)
    kb = sel.kb
    for reqs in batches:
        memo = _BatchMemo()
        for req in reqs:
            shared = sel._prepare(kb, req, memo)
            own = sel._prepare(kb, req)
            assert shared.seeds == own.seeds and shared.context == own.context
            # in the same order too: Lesk sums the context's terms in its order
            assert list(shared.seeds) == list(own.seeds) and list(shared.context) == list(own.context)
            assert shared.nodes == own.nodes


def test_ppr_equals_a_dense_power_iteration(
        demo: tuple[KnowledgeGraph, list[list[SelectionRequest]]]) -> None:
    kg, batches = demo
    sel = KnowledgeSelector(kg.store)
    kb = sel.kb
    prepared = [sel._prepare(kb, r) for reqs in batches for r in reqs]
    seeds = [p.seeds for p in prepared if p.seeds]
    targets = sorted({n for p in prepared for n in p.nodes if n is not None})
    got = kb.ppr(seeds, damping=0.85, iterations=20, targets=targets, hops=None)
    m = kb.matrix().toarray().astype(np.float64)
    v = np.zeros((m.shape[0], len(seeds)))
    for j, s in enumerate(seeds):
        for i, w in s.items():
            v[i, j] = w / sum(s.values())
    r = v.copy()
    for _ in range(20):
        r = 0.85 * (m @ r) + 0.15 * v
    for t in targets:
        assert got[t] == pytest.approx(r[t], abs=1e-6)
    # the 2-hop subgraph of the demo is all of it that the walk can reach
    local = kb.ppr(seeds, damping=0.85, iterations=20, targets=targets, hops=2)
    for t in targets:
        assert local[t] == pytest.approx(got[t], abs=1e-6)


def _random_kb(n: int, edges: int, seed: int) -> KnowledgeBase:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, edges).astype(np.int32)
    dst = rng.integers(0, n, edges).astype(np.int32)
    keep = src != dst
    none = np.zeros(0, dtype=np.int32)
    return KnowledgeBase([f"urn:x:{i}" for i in range(n)], src[keep], dst[keep],
                         np.zeros(int(keep.sum()), dtype=np.int16), ["rel"], [],
                         np.zeros(n + 1, dtype=np.int64), none, [], np.zeros(1, dtype=np.int64), none, none)


def _dense_ppr(kb: KnowledgeBase, seeds: list[dict[int, float]], nodes: np.ndarray,
               iterations: int) -> np.ndarray:
    """The plain power iteration in float64 on the subgraph of ``nodes`` (all rows computed)."""
    m = kb.matrix().toarray().astype(np.float64)[np.ix_(nodes, nodes)]
    pos = {int(x): i for i, x in enumerate(nodes)}
    v = np.zeros((len(nodes), len(seeds)))
    for j, s in enumerate(seeds):
        for i, w in s.items():
            v[pos[i], j] = w / sum(s.values())
    r = v.copy()
    for _ in range(iterations):
        r = 0.85 * (m @ r) + 0.15 * v
    return r


def _hops(kb: KnowledgeBase, start: set[int], hops: int) -> np.ndarray:
    adj: dict[int, set[int]] = {}
    for a, b in zip(kb.edge_src.tolist(), kb.edge_dst.tolist(), strict=True):
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    seen = set(start)
    frontier = set(start)
    for _ in range(hops):
        frontier = {y for x in frontier for y in adj.get(x, ())} - seen
        seen |= frontier
    return np.asarray(sorted(seen))


def test_ppr_on_a_local_subgraph_equals_the_plain_iteration_there() -> None:
    """A graph where the 2-hop subgraph is a part of it, more columns than one block of the
    product, the nodes reordered for locality: every target value is the plain iteration's."""
    kb = _random_kb(3000, 4200, seed=7)
    rng = np.random.default_rng(8)
    seeds = [{int(x): float(w) for x, w in zip(rng.choice(3000, 4, replace=False), rng.random(4) + 0.1,
                                                strict=True)} for _ in range(40)]
    targets = sorted({int(x) for x in rng.choice(3000, 30, replace=False)})
    nodes = _hops(kb, {i for s in seeds for i in s} | set(targets), 2)
    assert 300 < len(nodes) < 2500  # a real part of the graph
    for iterations in (20, 3, 1):
        got = kb.ppr(seeds, damping=0.85, iterations=iterations, targets=targets, hops=2)
        want = _dense_ppr(kb, seeds, nodes, iterations)
        at = {int(x): i for i, x in enumerate(nodes)}
        for t in targets:
            assert got[t] == pytest.approx(want[at[t]], rel=1e-4, abs=1e-9)
    whole = kb.ppr(seeds, damping=0.85, iterations=20, targets=targets, hops=None)
    want = _dense_ppr(kb, seeds, np.arange(3000), 20)
    for t in targets:
        assert whole[t] == pytest.approx(want[t], rel=1e-4, abs=1e-9)


def test_lemmas_of_a_node_are_the_lemma_tables_inverse() -> None:
    """``lemmas_of`` (a stable sort of the lemma table's node column) lists, for every node, the
    lemma keys whose rows name it in key order, repeats kept — as inverting the table row by row."""
    rng = np.random.default_rng(7)
    n, keys = 50, [f"{lang}:w{i}" for i in range(40) for lang in ("en", "fr")]
    counts = rng.integers(0, 5, len(keys))
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nodes = rng.integers(0, n, int(ptr[-1])).astype(np.int32)
    kb = _random_kb(n, 100, 7)
    kb.lemma_keys, kb.lemma_ptr, kb.lemma_nodes = keys, ptr, nodes
    kb.lemma_ranks = np.ones(len(nodes), dtype=np.int32)
    expected: dict[int, list[str]] = {}
    for k, key in enumerate(keys):
        for node in nodes[ptr[k] : ptr[k + 1]].tolist():
            expected.setdefault(node, []).append(key)
    assert any(len(v) != len(set(v)) for v in expected.values())   # a repeat is covered
    for node in range(n):
        assert kb.lemmas_of(node) == expected.get(node, [])
    empty = _random_kb(3, 4, 1)
    assert [empty.lemmas_of(i) for i in range(3)] == [[], [], []]


def test_lesk_is_the_sum_over_the_context_in_its_order(
        demo: tuple[KnowledgeGraph, list[list[SelectionRequest]]]) -> None:
    """``_lesk`` visits only the words a signature shares with the context, and sums them in the
    context's order: exactly (not approximately) the loop over every context word."""
    kg, batches = demo
    sel = KnowledgeSelector(kg.store)
    kb = sel.kb
    unseen = math.log(len(kb.nodes) + 1)
    checked = 0
    for reqs in batches:
        for req in reqs:
            p = sel._prepare(kb, req)
            naive = []
            for i in range(len(req.mention.candidates)):
                sig = sel._signature(kb, i, p)
                total = 0.0
                for wd, cw in p.context.items():
                    sw = sig.get(wd)
                    if sw:
                        j = kb.word_index.get(wd)
                        total += cw * sw * (float(kb.idf[j]) if j is not None and kb.idf is not None
                                            else unseen)
                naive.append(total)
            assert sel._lesk(kb, p) == naive
            checked += any(naive)
    assert checked >= 10
