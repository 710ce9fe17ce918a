"""SKOS integrity warnings for a parsed source, before it is loaded (as Skosify and qSKOS check):
two preferred labels in one language, a concept broader than itself, a relation to a literal,
the same label preferred and alternative, and a file with nothing kg-rag can annotate with.

Warnings, not errors: a thesaurus as published often has some, and it still loads; each warning
says what was found, how often, and one example, so that the user can fix the source."""

from __future__ import annotations

from kg_rag.store import EmbeddedStore

#: how many concepts a warning names
EXAMPLES = 3


def _some(items: list[str]) -> str:
    """The first :data:`EXAMPLES` of ``items`` and how many more there are."""
    shown = ", ".join(items[:EXAMPLES])
    return shown + (f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else "")


def warnings(tmp: EmbeddedStore, concepts: int, entries: int) -> list[str]:
    """One-line warnings about the source held in the default graph of ``tmp``."""
    out: list[str] = []
    if not concepts and not entries:
        if tmp.ask("ask-skos-mappings"):
            return out  # a mapping file: its links join concepts loaded from other files
        out.append("no skos:Concept, ontolex:LexicalConcept or OntoLex entry: nothing in this "
                   "file can be a label for annotation (loaded as plain RDF)")
        return out
    dup = tmp.select("select-skos-duplicate-pref-labels")
    if dup:
        out.append(f"{len(dup)} concept(s) with two or more skos:prefLabel in one language "
                   f"(SKOS allows one; annotation uses all of them): "
                   + _some([f"<{r['c'].value}> ({r['lang'].value or 'no language'}: {r['n'].value})"
                            for r in dup]))
    cycles = [r["c"].value for r in tmp.select("select-skos-broader-cycles")]
    if cycles:
        out.append(f"{len(cycles)} concept(s) broader than themselves (a cycle of "
                   f"skos:broader/narrower): {_some([f'<{c}>' for c in cycles])}")
    for r in tmp.select("select-skos-relations-to-literals"):
        out.append(f"{r['n'].value} {r['p'].value.rsplit('#', 1)[-1]} statement(s) with a literal "
                   f"object (a relation needs a resource, not a string), e.g. on "
                   f"<{r['example'].value}>")
    clash = [f"<{r['c'].value}>" for r in tmp.select("select-skos-pref-alt-clashes")]
    if clash:
        out.append(f"{len(clash)} label(s) both preferred and alternative/hidden on one concept "
                   f"(SKOS makes them disjoint): {_some(clash)}")
    return out
