"""Align a dictionary's senses with a thesaurus's concepts (issue 16, item 4).

The flow, one module per stage::

    gather (select-align-*.rq)  →  labels + gloss  →  score (z, P, one-to-one per entry)
        →  record (RDF of runs and links)  →  review (write a run; list / accept / reject)

``kg-rag align DICTIONARY THESAURUS`` and ``KnowledgeGraph.align`` call :func:`align`;
``kg-rag alignments`` and ``KnowledgeGraph.alignments`` / ``review_alignments`` call the rest.
The records live in their own graph (:data:`ALIGNMENTS_GRAPH`), apart from the user's sources;
ontology/DATA-MODEL.md ("Alignments") gives the RDF.
"""

from __future__ import annotations

from kg_rag.align.model import AlignmentLink, AlignmentReport, Evidence, Proposal
from kg_rag.align.record import ALIGNMENTS_GRAPH, STATUSES
from kg_rag.align.review import accept_above, align, list_links, set_status
from kg_rag.align.run import propose

__all__ = ["ALIGNMENTS_GRAPH", "STATUSES", "AlignmentLink", "AlignmentReport", "Evidence",
           "Proposal", "accept_above", "align", "list_links", "propose", "set_status"]
