"""OntoLex-Lemon materialisation: what the pipeline queries, derived from what a dictionary says.

Added to the source (everything in the file is kept as it is):

* ``ontolex:isSenseOf`` / ``ontolex:sense`` inverses, ``ontolex:LexicalSense`` types,
  ``ontolex:isLexicalizedSenseOf`` from ``ontolex:lexicalizedSense``;
* ``ontolex:LexicalEntry`` for Word / MultiwordExpression / Affix, ``skos:Concept`` for
  ``ontolex:LexicalConcept``;
* ``skos:example`` on the sense from ``lexicog:usageExample [ rdf:value "…" ]``;
* entry ``kgr:matchKey`` per distinct key of its written forms (language from the literal's tag,
  else the entry's or its lexicon's language), and ``dct:language`` when the entry has none;
* ``kgr:senseRank`` from an explicit order (lexicog ``rdf:_n`` members) — never from IRI order,
  which says nothing about frequency; a rank given in the file is kept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.namespaces import DCT, KGR
from kg_rag.store import EmbeddedStore
from kg_rag.text.normalise import base_language, match_key

_MEMBER = "http://www.w3.org/1999/02/22-rdf-syntax-ns#_"


def materialise(tmp: EmbeddedStore, graph: NamedNode) -> list[Quad]:
    """Statements to add to a parsed source held in the default graph of ``tmp``."""
    inferred = [Quad(t.subject, t.predicate, t.object) for t in tmp.construct("construct-ontolex-inferred")]
    tmp.oxigraph.bulk_extend(inferred)
    return inferred + _entry_keys(tmp) + _ranks(tmp)


def _entry_keys(tmp: EmbeddedStore) -> list[Quad]:
    return entry_keys(tmp.select("select-entry-forms"))


def entry_keys(rows: Iterable[Mapping[str, Any]]) -> list[Quad]:
    """``kgr:matchKey`` per distinct (key, language) of the entries' written forms in ``rows``
    (``?e ?rep ?elang ?lexlang``: select-entry-forms, or select-graph-entry-forms for one
    graph), and ``dct:language`` for an entry that has none."""
    out: list[Quad] = []
    seen: set[tuple[str, str, str]] = set()
    has_lang: set[str] = set()
    langs: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        e, rep = row["e"], row["rep"]
        if "elang" in row:
            has_lang.add(e.value)
        tag = rep.language or (row["elang"].value if "elang" in row else "") or (
            row["lexlang"].value if "lexlang" in row else "")
        lang = base_language(tag)
        if lang:
            langs[e.value].add(lang)
        key = match_key(rep.value)
        if not key or (e.value, key, lang) in seen:
            continue
        seen.add((e.value, key, lang))
        out.append(Quad(e, KGR.matchKey, Literal(key, language=lang) if lang else Literal(key)))
    for e, found in langs.items():
        if e not in has_lang:
            out += [Quad(NamedNode(e), DCT.language, Literal(lang)) for lang in sorted(found)]
    return out


def _ranks(tmp: EmbeddedStore) -> list[Quad]:
    order: dict[str, list[tuple[int, NamedNode]]] = defaultdict(list)
    for row in tmp.select("select-lexicog-sense-order"):
        suffix = row["member"].value[len(_MEMBER):]
        if suffix.isdigit():
            order[row["e"].value].append((int(suffix), row["s"]))
    out: list[Quad] = []
    for members in order.values():
        seen: set[str] = set()
        rank = 0
        for _, s in sorted(members, key=lambda m: m[0]):
            if s.value in seen:
                continue
            seen.add(s.value)
            rank += 1
            out.append(Quad(s, KGR.senseRank, Literal(rank)))
    return out
