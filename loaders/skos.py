"""SKOS materialisation: SKOS-XL labels as plain SKOS labels, and concept match keys.

Everything else of a thesaurus (schemes, broader/narrower/related, collections, notes) is kept
as it is in the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.namespaces import KGR
from kg_rag.store import EmbeddedStore
from kg_rag.text.normalise import base_language, match_key


def materialise(tmp: EmbeddedStore, graph: NamedNode) -> list[Quad]:
    """Statements to add to a parsed source held in the default graph of ``tmp``.

    The SKOS-XL labels are also added to ``tmp`` (later steps see them)."""
    labels = [Quad(t.subject, t.predicate, t.object) for t in tmp.construct("construct-skosxl-labels")]
    tmp.oxigraph.bulk_extend(labels)
    return labels + match_keys(tmp)


def match_keys(tmp: EmbeddedStore) -> list[Quad]:
    """``kgr:matchKey`` per distinct (key, language) of each concept's labels."""
    return label_keys(tmp.select("select-concept-label-texts"))


def label_keys(rows: Iterable[Mapping[str, Any]]) -> list[Quad]:
    """``kgr:matchKey`` per distinct (key, language) of the concepts' labels in ``rows``
    (``?c ?label``: select-concept-label-texts, or select-graph-label-texts for one graph)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[Quad] = []
    pred = KGR.matchKey
    for row in rows:
        c, label = row["c"], row["label"]
        lang = base_language(label.language)
        key = match_key(label.value)
        if not key or (c.value, key, lang) in seen:
            continue
        seen.add((c.value, key, lang))
        lit = Literal(key, language=lang) if lang else Literal(key)
        out.append(Quad(c, pred, lit))
    return out
