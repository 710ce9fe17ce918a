"""Documents annotated with a source's concepts (``select-documents-of-source``), and stored
documents read back as :class:`~kg_rag.documents.readers.SourceDocument` (their stored text,
language, title, source and index root) so that they can be annotated again with what is loaded
now — ``kg-rag drop-source --reannotate``, :meth:`kg_rag.api.KnowledgeGraph.reannotate`."""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import NamedNode

from kg_rag.documents import SourceDocument
from kg_rag.errors import NotFoundError
from kg_rag.pipeline.record import doc_iri
from kg_rag.store import Store


def documents_of_source(store: Store, graph: str) -> dict[str, int]:
    """Document id → how many of its annotations name a concept or sense of the source ``graph``."""
    rows = store.select("select-documents-of-source", bind={"source": NamedNode(graph)})
    return {r["id"].value: int(r["annotations"].value) for r in rows}


def stored_documents(store: Store, doc_ids: Iterable[str]) -> list[SourceDocument]:
    """The stored documents ``doc_ids`` as they were indexed (NotFoundError naming the first that
    is not there; nothing is read half)."""
    out = []
    for i in dict.fromkeys(doc_ids):
        rows = store.select("select-document", bind={"doc": doc_iri(i)})
        if not rows:
            raise NotFoundError(f"no indexed document has the id {i!r}; kg-rag documents lists them")
        r = rows[0]
        lang = r["lang"].value
        out.append(SourceDocument(
            id=r["id"].value, text=r["text"].value, lang=None if lang == "und" else lang,
            title=r["title"].value if "title" in r else "",
            source=r["source"].value if "source" in r else "",
            root=r["root"].value if "root" in r else ""))
    return out
