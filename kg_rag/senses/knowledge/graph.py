"""The concept graph and gloss index used by the knowledge-based selector.

Loaded once per store with three queries (``select-concept-edges``, ``select-concept-glosses``,
``select-lemma-concepts``), kept in the store's registry (:class:`kg_rag.derived.Derived`), and
cached on disk under ``Settings.cache_dir`` keyed by the catalog version (what is loaded), so a
second process starts in a second.

* edges: WordNet synset relations and SKOS broader/narrower/related, undirected, plus ``gloss``
  edges from a concept to the monosemous words of its definition (eXtended WordNet-like);
* glosses: the content-word lemmas of each concept's definitions and examples;
* lemmas: every (language, lemma) of the dictionaries with the concepts it can mean.

:meth:`KnowledgeBase.ppr` runs Personalized PageRank (Agirre & Soroa 2009) for many
personalisation vectors at once with ``scipy.sparse`` power iteration: on the graph's nodes in
reverse Cuthill-McKee order (a subgraph's rows then read the iterate with locality) and 16
columns at a time (a block of the iterate stays in the core's cache). Every target value is the
plain iteration's: the same products, only each row's sum taken in the new node order (float32
rounding: ≤ 5e-6 relative on semeval2007's batches).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from pyoxigraph import Literal
from scipy.sparse.csgraph import reverse_cuthill_mckee

from kg_rag.derived import Derived, Slot
from kg_rag.store import Store
from kg_rag.text.analyse import gloss_words as words
from kg_rag.text.normalise import base_language

log = logging.getLogger(__name__)

CACHE_FORMAT = "kb-3"
#: small knowledge bases (tests, demos) build in milliseconds: only large ones go to disk
DISK_CACHE_MIN_NODES = 5_000
#: columns of the PPR iterate multiplied at once (16 float32 columns of a 50,000-node subgraph
#: are 3 MB: measured on semeval2007's batches, 16-32 columns at a time are 1.3-1.6x faster than 64)
PPR_BLOCK = 16


def _pack(strings: Sequence[str]) -> np.ndarray:
    return np.frombuffer("\n".join(strings).encode("utf-8"), dtype=np.uint8)


def _unpack(arr: np.ndarray) -> list[str]:
    if arr.size == 0:
        return []
    return bytes(arr).decode("utf-8").split("\n")


@dataclass(slots=True)
class KnowledgeBase:
    nodes: list[str]
    edge_src: np.ndarray            # int32 node index
    edge_dst: np.ndarray
    edge_rel: np.ndarray            # int16 index into rel_names
    rel_names: list[str]
    vocab: list[str]                # gloss words
    gloss_ptr: np.ndarray           # CSR over nodes → gloss word ids
    gloss_ids: np.ndarray
    lemma_keys: list[str]           # "lang:key"
    lemma_ptr: np.ndarray           # CSR over lemma keys → (node, rank)
    lemma_nodes: np.ndarray
    lemma_ranks: np.ndarray
    index: dict[str, int] = field(default_factory=dict)
    lemma_index: dict[str, int] = field(default_factory=dict)
    word_index: dict[str, int] = field(default_factory=dict)
    _matrix: sp.csr_matrix | None = None
    _ordered: tuple[sp.csr_matrix, np.ndarray] | None = None
    _inv: tuple[np.ndarray, np.ndarray] | None = None
    idf: np.ndarray | None = None
    df: np.ndarray | None = None
    cache: dict[str, object] = field(default_factory=dict)  # derived tables (kg_rag.senses.knowledge.prior)

    def __post_init__(self) -> None:
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.lemma_index = {k: i for i, k in enumerate(self.lemma_keys)}
        self.word_index = {w: i for i, w in enumerate(self.vocab)}
        df = np.bincount(self.gloss_ids, minlength=len(self.vocab)).astype(np.float64) \
            if len(self.vocab) else np.zeros(0)
        self.idf = np.log((len(self.nodes) + 1) / (df + 0.5))
        self.df = df

    # --- lookups --------------------------------------------------------------------------
    def count(self, word: str) -> int:
        """How many concepts' definitions and examples use ``word`` (a gloss-corpus frequency)."""
        j = self.word_index.get(word)
        return int(self.df[j]) if j is not None and self.df is not None else 0

    def gloss(self, node: int) -> np.ndarray:
        return self.gloss_ids[self.gloss_ptr[node] : self.gloss_ptr[node + 1]]

    def concepts_of(self, lang: str, key: str) -> list[tuple[int, int]]:
        """(node, sense rank) of every concept the lemma ``key`` can mean in ``lang``."""
        i = self.lemma_index.get(f"{lang}:{key}")
        if i is None:
            return []
        a, b = self.lemma_ptr[i], self.lemma_ptr[i + 1]
        return list(zip(self.lemma_nodes[a:b].tolist(), self.lemma_ranks[a:b].tolist(), strict=True))

    def lemmas_of(self, node: int) -> list[str]:
        """The "lang:key" lemmas that can mean ``node``, in the order of :attr:`lemma_keys` (its
        index is built on first use)."""
        nodes, keys = self._lemmas_by_node()
        at = nodes.dtype.type(node)   # (a Python int would have the whole column converted)
        a, b = np.searchsorted(nodes, at, "left"), np.searchsorted(nodes, at, "right")
        return [self.lemma_keys[k] for k in keys[a:b].tolist()]

    def _lemmas_by_node(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (node, lemma key number) of the lemma table, by node and then key number (a
        stable sort of the table's node column)."""
        if self._inv is None:
            n = int(self.lemma_ptr[-1]) if len(self.lemma_ptr) else 0
            nodes = self.lemma_nodes[:n]
            keys = np.repeat(np.arange(len(self.lemma_keys)), np.diff(self.lemma_ptr))
            order = np.argsort(nodes, kind="stable")
            self._inv = (nodes[order], keys[order])
        return self._inv

    def neighbours(self, node: int) -> np.ndarray:
        m = self.matrix()
        out: np.ndarray = m.indices[m.indptr[node] : m.indptr[node + 1]]
        return out

    # --- personalized PageRank --------------------------------------------------------------
    def matrix(self) -> sp.csr_matrix:
        """Row-normalised adjacency (undirected, duplicate edges merged), every relation."""
        m = self._matrix
        if m is None:
            s, d = self.edge_src, self.edge_dst
            n = len(self.nodes)
            a = sp.coo_matrix((np.ones(2 * len(s), dtype=np.float32),
                               (np.concatenate([s, d]), np.concatenate([d, s]))), shape=(n, n)).tocsr()
            a.data[:] = 1.0  # merge parallel edges
            deg = np.asarray(a.sum(axis=1)).ravel()
            deg[deg == 0] = 1.0
            m = sp.diags((1.0 / deg).astype(np.float32)) @ a
            m = m.T.tocsr().astype(np.float32)  # column-stochastic: r' = M r
            self._matrix = m
        return m

    def ppr(self, seeds: Sequence[dict[int, float]], damping: float, iterations: int,
            targets: Sequence[int] = (), hops: int | None = None) -> dict[int, np.ndarray]:
        """Personalized PageRank, one column per seed vector (normalised to sum 1); returns the
        rank of each node of ``targets`` (one value per column).

        With ``hops`` the walk is restricted to the nodes within that many edges of a seed or a
        target (a local subgraph: much faster, and the mass that would leave it is small)."""
        m, position = self._ppr_matrix()
        k = len(seeds)
        # the seed vectors as (row, column, weight) triples, each column normalised to sum 1
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for j, s in enumerate(seeds):
            tot = sum(s.values())
            if tot > 0:
                rows += s.keys()
                cols += [j] * len(s)
                vals += [w / tot for w in s.values()]
        seed_rows = position[np.asarray(rows, dtype=np.int64)]
        target_rows = position[np.asarray(list(targets), dtype=np.int64)]
        if hops is not None:
            nodes = _within(m, np.concatenate([seed_rows, target_rows]), hops)
            local = np.full(len(self.nodes), -1, dtype=np.int64)
            local[nodes] = np.arange(len(nodes))
            m = m[nodes][:, nodes].tocsr()
            seed_rows = local[seed_rows]
            target_rows = local[target_rows]
        n = m.shape[0]
        v = np.zeros((n, k), dtype=np.float32)
        np.add.at(v, (seed_rows, np.asarray(cols, dtype=np.int64)), np.asarray(vals, dtype=np.float32))
        at = np.maximum(target_rows, 0)
        r = _power(m, v, damping, iterations, at)
        out: dict[int, np.ndarray] = {}
        zero = np.zeros(k, dtype=np.float32)
        for i, (t, tr) in enumerate(zip(targets, target_rows.tolist(), strict=True)):
            out[t] = r[i] if tr >= 0 else zero
        return out

    def _ppr_matrix(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """:meth:`matrix` with its nodes in reverse Cuthill-McKee order, and each node's position
        in that order (built once; :meth:`matrix` itself keeps the node order, which
        :meth:`neighbours` gives)."""
        if self._ordered is None:
            m = self.matrix()
            order = reverse_cuthill_mckee(m, symmetric_mode=True).astype(np.int64)  # pattern symmetric
            position = np.empty(len(order), dtype=np.int64)
            position[order] = np.arange(len(order))
            pm = m[order][:, order].tocsr()
            pm.sort_indices()
            self._ordered = (pm, position)
        return self._ordered


def _power(m: sp.csr_matrix, v: np.ndarray, damping: float, iterations: int,
           targets: np.ndarray) -> np.ndarray:
    """``iterations`` steps of ``r <- damping * m @ r + (1 - damping) * v`` from ``r = v``, on
    :data:`PPR_BLOCK` columns at a time; the rows ``targets`` of the result."""
    out = np.empty((len(targets), v.shape[1]), dtype=np.float32)
    for j in range(0, v.shape[1], PPR_BLOCK):
        vb = np.ascontiguousarray(v[:, j : j + PPR_BLOCK])
        teleport = (1 - damping) * vb
        r = vb.copy()
        for _ in range(iterations):
            r = m @ r
            r *= damping
            r += teleport
        out[:, j : j + PPR_BLOCK] = r[targets]
    return out


def _gather(m: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions in ``m.indices``/``m.data`` of the entries of ``rows`` (row by row, in
    order), and the number of entries of each row."""
    starts = m.indptr[rows].astype(np.int64)
    counts = m.indptr[rows + 1].astype(np.int64) - starts
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), counts
    # position k of row r's entries: starts[r] + k, as one vector
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    return offsets + np.arange(total, dtype=np.int64), counts


def _within(m: sp.csr_matrix, start: np.ndarray, hops: int) -> np.ndarray:
    """The nodes within ``hops`` edges of ``start``, sorted (``m``'s pattern is symmetric: a
    row's entries are the node's neighbours). A hop from a few nodes gathers their rows; a hop
    from many multiplies the whole graph with the indicator vector (cheaper beyond ~1/32 of the
    entries). Either way only what is new is added, so the set is the same."""
    seen = np.zeros(m.shape[0], dtype=bool)
    seen[start] = True
    frontier = np.flatnonzero(seen)
    for _ in range(hops):
        if not len(frontier):
            break
        degree = int((m.indptr[frontier + 1] - m.indptr[frontier]).sum())
        if 32 * degree < m.nnz:
            at, _ = _gather(m, frontier)
            nb = m.indices[at]
            new = np.unique(nb[~seen[nb]])
        else:
            reach = m @ seen.astype(np.float32) > 0
            new = np.flatnonzero(reach & ~seen)
        seen[new] = True
        frontier = new
    return np.flatnonzero(seen)


# --- building and caching -------------------------------------------------------------------
def build(store: Store) -> KnowledgeBase:
    t0 = time.perf_counter()
    nodes: list[str] = []
    index: dict[str, int] = {}

    def idx(iri: str) -> int:
        i = index.get(iri)
        if i is None:
            i = index[iri] = len(nodes)
            nodes.append(iri)
        return i

    lemma_rows: dict[str, list[tuple[int, int]]] = {}
    for r in store.select("select-lemma-concepts"):
        key = r["key"]
        lang = base_language(key.language) if isinstance(key, Literal) else ""
        rank = int(r["rank"].value) if "rank" in r else 99
        lemma_rows.setdefault(f"{lang}:{key.value}", []).append((idx(r["concept"].value), rank))
    rel_names: list[str] = []
    src: list[int] = []
    dst: list[int] = []
    rel: list[int] = []
    for r in store.select("select-concept-edges"):
        name = r["rel"].value
        if name not in rel_names:
            rel_names.append(name)
        src.append(idx(r["a"].value))
        dst.append(idx(r["b"].value))
        rel.append(rel_names.index(name))
    vocab: list[str] = []
    word_ids: dict[str, int] = {}
    glosses: dict[int, list[int]] = {}
    for r in store.select("select-concept-glosses"):
        text = r["text"]
        lang = base_language(text.language) if isinstance(text, Literal) else ""
        ids = glosses.setdefault(idx(r["concept"].value), [])
        for w in words(text.value, lang or "en"):
            wid = word_ids.get(w)
            if wid is None:
                wid = word_ids[w] = len(vocab)
                vocab.append(w)
            ids.append(wid)
    # gloss edges: a concept to the only concept of each monosemous word of its definition
    if "gloss" not in rel_names:
        rel_names.append("gloss")
    g = rel_names.index("gloss")
    mono: dict[str, int] = {}
    for key, cs in lemma_rows.items():
        if key.startswith("en:") and len({c for c, _ in cs}) == 1:
            mono[key[3:]] = cs[0][0]
    for node, ids in glosses.items():
        for wid in set(ids):
            other = mono.get(vocab[wid])
            if other is not None and other != node:
                src.append(node)
                dst.append(other)
                rel.append(g)
    n = len(nodes)
    gptr = np.zeros(n + 1, dtype=np.int64)
    flat: list[int] = []
    for i in range(n):
        ids = sorted(set(glosses.get(i, ())))
        flat.extend(ids)
        gptr[i + 1] = len(flat)
    keys = sorted(lemma_rows)
    lptr = np.zeros(len(keys) + 1, dtype=np.int64)
    lnodes: list[int] = []
    lranks: list[int] = []
    for k, key in enumerate(keys):
        for c, rk in sorted(lemma_rows[key], key=lambda x: x[1]):
            lnodes.append(c)
            lranks.append(rk)
        lptr[k + 1] = len(lnodes)
    kb = KnowledgeBase(
        nodes, np.asarray(src, dtype=np.int32), np.asarray(dst, dtype=np.int32),
        np.asarray(rel, dtype=np.int16), rel_names, vocab, gptr, np.asarray(flat, dtype=np.int32),
        keys, lptr, np.asarray(lnodes, dtype=np.int32), np.asarray(lranks, dtype=np.int32))
    log.info("knowledge base built: %d concepts, %d edges, %d gloss words in %.1fs",
             n, len(src), len(vocab), time.perf_counter() - t0)
    return kb


def _save(kb: KnowledgeBase, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")  # one per writer: processes may race
    np.savez(tmp, nodes=_pack(kb.nodes), edge_src=kb.edge_src, edge_dst=kb.edge_dst,
             edge_rel=kb.edge_rel, rel_names=_pack(kb.rel_names), vocab=_pack(kb.vocab),
             gloss_ptr=kb.gloss_ptr, gloss_ids=kb.gloss_ids, lemma_keys=_pack(kb.lemma_keys),
             lemma_ptr=kb.lemma_ptr, lemma_nodes=kb.lemma_nodes, lemma_ranks=kb.lemma_ranks)
    os.replace(tmp, path)


def _read(path: Path) -> KnowledgeBase:
    with np.load(path, allow_pickle=False) as z:
        return KnowledgeBase(
            _unpack(z["nodes"]), z["edge_src"], z["edge_dst"], z["edge_rel"], _unpack(z["rel_names"]),
            _unpack(z["vocab"]), z["gloss_ptr"], z["gloss_ids"], _unpack(z["lemma_keys"]),
            z["lemma_ptr"], z["lemma_nodes"], z["lemma_ranks"])


#: the knowledge base, in the store's registry
KB: Slot[KnowledgeBase] = Slot("knowledge-base")


def cache_path(derived: Derived) -> Path:
    """The disk cache file of the knowledge base of ``derived``'s store (its catalog version)."""
    return derived.cache_file(f"wsd-{CACHE_FORMAT}", ".npz")


def knowledge_base(store: Store, disk_cache: bool = True) -> KnowledgeBase:
    """The knowledge base of ``store``: from its registry, else the disk cache, else built and cached."""
    derived = Derived.of(store)
    return derived.value(KB, lambda: _load(store, cache_path(derived), disk_cache))


def _load(store: Store, path: Path, disk_cache: bool) -> KnowledgeBase:
    kb: KnowledgeBase | None = None
    if disk_cache and path.is_file():
        try:
            kb = _read(path)
            log.info("knowledge base read from %s", path)
        except (OSError, ValueError, KeyError) as e:
            log.warning("ignoring the unreadable cache %s (%s); rebuilding it", path, e)
    if kb is None:
        kb = build(store)
        if disk_cache and len(kb.nodes) >= DISK_CACHE_MIN_NODES:
            try:
                _save(kb, path)
            except OSError as e:
                log.warning("could not write the cache %s: %s", path, e)
    return kb

