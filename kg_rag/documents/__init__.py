"""Documents: reading files into :class:`SourceDocument` and splitting them into passages."""

from kg_rag.documents.readers import (
    SourceDocument,
    doc_from_record,
    iter_paragraphs,
    read_documents,
)

__all__ = ["SourceDocument", "doc_from_record", "iter_paragraphs", "read_documents"]
