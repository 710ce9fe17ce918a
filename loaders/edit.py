"""A user's SPARQL update that edits a vocabulary: what a load derives, brought in line.

A load writes, beside a source's own statements, what kg-rag derives from them — the
``kgr:matchKey`` of every concept label and dictionary form (:mod:`loaders.skos`,
:mod:`loaders.ontolex`), through which the annotator finds them — and a catalog record whose
change moves the *catalog version* (:func:`kg_rag.derived.catalog_version`), the key of every
cache derived from the vocabularies (the lexicon, the knowledge base, the evidence and lemma
indexes, the kept facts). A user's update (:meth:`kg_rag.api.KnowledgeGraph.update`, the
service's ``/sparql`` updates) writes only what it says, so after one that may have written a
vocabulary graph (:func:`vocabulary_graphs`):

* each named graph it wrote gets its match keys recomputed from the labels and forms it now
  holds, the same way a load computes them, and the difference written (keys of a label
  removed are removed, keys of a label added are added); an update that may write graphs it
  does not name (``GRAPH ?g`` in a template, ``DROP ALL``) gets every such graph of the store
  done;
* the catalog's edit token (``kgr:vocabularyEdit`` of the catalog graph) is replaced, so the
  catalog version moves and no cache of the old vocabularies is used again — in this process,
  in the next one, or (a remote store) in another.

Not derived again: the SKOS-XL labels a load copies into plain SKOS labels, a dictionary's
sense ranks and OntoLex inverses, and the source's catalog record (its checksum still names the
file it was loaded from). Edit those by loading the source again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.namespaces import DECISIONS_GRAPH, ID, KGR
from kg_rag.store import Change, Store
from kg_rag.store.update_targets import Targets
from loaders.catalog import CATALOG_GRAPH
from loaders.ontolex import entry_keys
from loaders.skos import label_keys

log = logging.getLogger(__name__)

#: graphs that hold kg-rag's own records of documents and questions, never a vocabulary
_DATA_PREFIXES = (ID + "doc/", ID + "question/")
_DATA_GRAPHS = frozenset({DECISIONS_GRAPH.value, ID + "graph/documents-stamp", ID + "graph/settings"})


def is_vocabulary_graph(iri: str) -> bool:
    """Whether a named graph may hold vocabulary statements: anything but kg-rag's document,
    question, decision, settings and stamp graphs (the catalog and alignments graphs count)."""
    return not iri.startswith(_DATA_PREFIXES) and iri not in _DATA_GRAPHS


def vocabulary_graphs(store: Store, targets: Targets) -> list[str] | None:
    """The vocabulary graphs an update with ``targets`` may have written, in order; None when it
    wrote none (only document, question and decision graphs)."""
    if targets.every:
        return sorted(g.value for g in store.named_graphs() if is_vocabulary_graph(g.value))
    graphs = sorted(g for g in targets.graphs if is_vocabulary_graph(g))
    return graphs if graphs or targets.default else None


def after_edit(store: Store, graphs: Iterable[str]) -> int:
    """After a user's update wrote these vocabulary graphs: their match keys recomputed and the
    catalog's edit token replaced (the module docstring). Returns how many keys changed."""
    changed = 0
    try:
        for g in graphs:
            if g != CATALOG_GRAPH.value:
                changed += sync_match_keys(store, NamedNode(g))
    finally:
        note_edit(store)
    return changed


def sync_match_keys(store: Store, graph: NamedNode) -> int:
    """Write the difference between the match keys ``graph`` holds and those its labels and
    forms give now; how many were added or removed."""
    bind = {"g": graph}
    want = {(q.subject, q.object) for q in
            label_keys(store.select("select-graph-label-texts", bind=bind))
            + entry_keys(store.select("select-graph-entry-forms", bind=bind))
            if q.predicate == KGR.matchKey}
    held = {(r["target"], r["key"]) for r in store.select("select-graph-match-keys", bind=bind)}
    add, drop = want - held, held - want
    if add or drop:
        store.apply(Change(delete=[Quad(s, KGR.matchKey, k, graph) for s, k in sorted(drop, key=str)],
                           insert=[Quad(s, KGR.matchKey, k, graph) for s, k in sorted(add, key=str)]))
        log.info("%s: %d match keys added, %d removed after the update", graph.value, len(add), len(drop))
    return len(add) + len(drop)


def note_edit(store: Store) -> None:
    """Replace the catalog's edit token (the catalog version moves)."""
    held = [Quad(CATALOG_GRAPH, KGR.vocabularyEdit, r["sha"], CATALOG_GRAPH)
            for r in store.select("select-catalog-state")
            if r["g"] == CATALOG_GRAPH and "sha" in r]
    token = Quad(CATALOG_GRAPH, KGR.vocabularyEdit, Literal(uuid.uuid4().hex), CATALOG_GRAPH)
    store.apply(Change(delete=held, insert=[token]))


__all__ = ["after_edit", "is_vocabulary_graph", "note_edit", "sync_match_keys", "vocabulary_graphs"]
