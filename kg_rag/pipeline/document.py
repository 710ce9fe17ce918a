"""One indexed document with its annotations and their chosen concepts (``GET /documents/{id}``,
:meth:`kg_rag.api.KnowledgeGraph.document`), read by two query files (``select-document``,
``select-document-annotations``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kg_rag.errors import NotFoundError
from kg_rag.pipeline.record import doc_iri
from kg_rag.store import Store


def document_record(store: Store, doc_id: str,
                    labels: Callable[[Iterable[str], str], dict[str, str]]) -> dict[str, Any]:
    """The document ``doc_id`` as JSON: id, iri, title, lang, source, text and ``annotations``
    (start, end, text, candidates, chosen concepts with a label in the document's language,
    decision); ``labels(concepts, lang)`` names the concepts. NotFoundError (404) when no
    document has that id."""
    iri = doc_iri(doc_id)
    rows = store.select("select-document", bind={"doc": iri})
    if not rows:
        raise NotFoundError(f"no indexed document has the id {doc_id!r}; GET /documents lists them")
    head = rows[0]
    lang = head["lang"].value
    anns: dict[str, dict[str, Any]] = {}
    for r in store.select("select-document-annotations", bind={"doc": iri}):
        a = anns.setdefault(r["ann"].value, {
            "iri": r["ann"].value, "start": int(r["start"].value), "end": int(r["end"].value),
            "text": r["exact"].value if "exact" in r else "", "candidates": [], "chosen": [],
            "decision": r["decision"].value if "decision" in r else None})
        if "candidate" in r and r["candidate"].value not in a["candidates"]:
            a["candidates"].append(r["candidate"].value)
        if "chosen" in r and r["chosen"].value not in a["chosen"]:
            a["chosen"].append(r["chosen"].value)
    concepts = {c for a in anns.values() for c in a["chosen"]}
    names = labels(concepts, lang) if concepts else {}
    annotations = [{**a, "chosen": [{"concept": c, "label": names.get(c, "")} for c in a["chosen"]]}
                   for a in anns.values()]
    return {"id": head["id"].value, "iri": iri.value,
            "title": head["title"].value if "title" in head else "", "lang": lang,
            "source": head["source"].value if "source" in head else "",
            "text": head["text"].value, "annotations": annotations}
