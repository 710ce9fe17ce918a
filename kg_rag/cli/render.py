"""Terminal rendering of answers and mention reports (Hebrew shown by the terminal's own bidi;
no raw bidi controls printed)."""

from __future__ import annotations

from kg_rag.api import KnowledgeGraph
from kg_rag.model import Answer, MentionReport
from kg_rag.text.normalise import for_terminal


def mention_lines(reports: tuple[MentionReport, ...] | list[MentionReport], labels: dict[str, str],
                  glosses: dict[str, str] | None = None) -> list[str]:
    """``glosses``: a short definition per concept, shown where readings of one mention would
    otherwise look the same (see :func:`same_looking`)."""
    glosses = glosses or {}
    out = []
    for r in reports:
        m = r.mention
        # readings of several schemes: each candidate says which (``Inflation (stw)``)
        sources = len({c.scheme for c in m.candidates}) > 1

        def name(concept: str, source: str, sources: bool = sources) -> str:
            label = labels.get(concept, concept)
            return f"{label} ({source or '-'})" if sources else label

        if not m.ambiguous:
            c = m.candidates[0]
            shown = name(c.concept, c.scheme_name)
            if len(m.concepts) > 1:  # one meaning in several schemes
                src = {x.concept: x.scheme_name for x in m.candidates}
                shown = " = ".join(name(k, src[k]) for k in m.concepts)
            out.append(f"  “{m.text}” [{m.start}:{m.end}] → {shown}")
            continue
        sel = r.selection
        head = f"  “{m.text}” [{m.start}:{m.end}] ambiguous, {m.readings} senses"
        if sel is not None:
            head += f" — {sel.agent.name} selector" + (" (reused decision)" if r.reused else "")
        out.append(head)
        scores = dict(sel.scores) if sel else {}
        several = len({c.lang for c in m.candidates}) > 1  # readings of several languages
        for c in sorted(m.candidates, key=lambda c: -scores.get(c.id, 0.0)):
            mark = "✔" if sel is not None and sel.chosen is not None and sel.chosen.id == c.id else " "
            score = f"{scores[c.id]:.3f}" if c.id in scores else "  -  "
            lemma = f"{c.lemma} [{c.lang or '-'}]" if several else c.lemma
            gloss = f" — {glosses[c.concept]}" if c.concept in glosses else ""
            out.append(f"     {mark} {score}  {name(c.concept, c.scheme_name)}{gloss}  ({lemma}, {c.matched_by})")
        if sel is not None and sel.chosen is None:
            out.append(f"     unresolved: {sel.reason}")
        elif sel is not None and sel.llm is not None and sel.llm.rationale:
            out.append(f"     rationale: {sel.llm.rationale}")
        if r.decision:
            out.append(f"     decision <{r.decision}>")
    return out


def same_looking(reports: tuple[MentionReport, ...] | list[MentionReport], labels: dict[str, str]) -> list[str]:
    """Concepts that share their display label with another reading of the same ambiguous
    mention (a Hebrew WordNet word's synsets all labelled by the word itself)."""
    out: list[str] = []
    for r in reports:
        if not r.mention.ambiguous:
            continue
        seen: dict[str, list[str]] = {}
        for c in r.mention.concepts:
            seen.setdefault(labels.get(c, c), []).append(c)
        out += [c for group in seen.values() if len(group) > 1 for c in group]
    return out


def answer_text(kg: KnowledgeGraph, a: Answer, passages: bool = True) -> str:
    iris = [c.concept for r in a.mentions for c in r.mention.candidates]
    labels = kg.labels(iris, a.lang)
    same = same_looking(a.mentions, labels)
    glosses = kg.glosses(same, a.lang) if same else {}
    lines = [f"question [{a.lang}] ({a.wsd}): {a.question}"]
    if a.language is not None and a.language.source != "given":
        lines.append(f"  language: {a.language.note()}")
    if a.question_iri:
        lines.append(f"  <{a.question_iri}>")
    lines += mention_lines(a.mentions, labels, glosses)
    if not a.results:
        lines.append(f"  no results: {a.reason or 'no document matches the chosen concepts'}")
    if a.results:
        lines.append("  documents, in ranking order (rarity, repetition and focus of the matched "
                     "meanings); relevance 0-1: the expected share of the question's words whose "
                     "meaning the document shares:")
    for i, r in enumerate(a.results, 1):
        via = ", ".join(c.label for c in r.concepts[:4])
        lines.append(f"  {i:2d}. {r.relevance:4.2f}  {r.doc_id} [{r.lang}] {r.title} — via {via}")
        if passages:
            lines.append(f"        {_highlight(r.passage, r.highlights)}")
    if a.llm_calls:
        lines.append(f"  LLM: {a.llm_calls} call(s), {a.tokens_in} tokens in, {a.tokens_out} out")
    return for_terminal("\n".join(lines))


def _highlight(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos:
            continue
        out += [text[pos:start], "[", text[start:end], "]"]
        pos = end
    out.append(text[pos:])
    line = "".join(out).replace("\n", " ")
    return line if len(line) <= 240 else line[:237] + "…"
