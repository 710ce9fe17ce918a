"""The explanation page (``GET /explain?iri=…`` for a browser): the path from the question to
the documents drawn as a graph (:mod:`.explain_graph`), then the same in tables — each
ambiguous word's candidate senses with definitions and probabilities, the selector and its
evidence in words, the documents, and for one result (``&document=…``) its relevance, each
word's share and the contributions its ranking score sums.

Server-rendered, no script, nothing external. Every text run is escaped, stripped of raw bidi
controls and isolated (``<bdi>`` or ``dir="auto"``), so Hebrew reads right-to-left beside
English ("ענף — branch").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kg_rag import Explanation
from kg_rag.service.explain_graph import SVG_CSS, _evidence, explanation_svg
from kg_rag.service.page import esc, layout, link

CSS = SVG_CSS + """
.line{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:.85rem}
td.num{font-variant-numeric:tabular-nums;text-align:end;white-space:nowrap}
"""


def concept_iris(summary: Mapping[str, Any]) -> list[str]:
    """Every concept IRI the page labels (for the English labels beside the question's)."""
    out: list[str] = []
    for m in summary.get("mentions", []):
        out += m.get("candidates", [])
        out += [c["iri"] for c in m.get("concepts", [])]
    for d in summary.get("documents", []):
        out += [c["iri"] for c in d.get("concepts", [])]
    r = summary.get("result") or {}
    out += [x["document_concept"] for x in r.get("links", [])]
    return list(dict.fromkeys(out))


def _bdi(text: object) -> str:
    return f"<bdi>{esc(text)}</bdi>"


def _both(label: str, english: str | None) -> str:
    """``label — english`` with each run isolated."""
    if english and english != label:
        return f'{_bdi(label)} <span class="muted">— {_bdi(english)}</span>'
    return _bdi(label)


def _candidates(m: Mapping[str, Any], english: Mapping[str, str]) -> str:
    dec = m["decision"]
    sel = dec.get("selector") or {}
    rows = []
    for c in dec.get("candidates", []):   # in score order, as explain's summary lists them
        chosen = c.get("concept") == dec.get("chosen_concept")
        rows.append(f'<tr{" class=chosen" if chosen else ""}><td>{"✓ " if chosen else ""}'
                    f'<a href="/explain?iri={esc(_q(c.get("concept", "")))}">'
                    f'{_both(c.get("label") or c.get("concept", ""), english.get(c.get("concept", "")))}</a></td>'
                    f'<td dir="auto">{esc(c.get("definition") or "")}</td>'
                    f'<td class="num">{float(c.get("score") or 0):.2f}</td></tr>')
    why = _evidence(dec.get("reason") or "")
    return (f'<div class="mention"><div><b>{_bdi(m.get("text", ""))}</b> '
            f'<span class="muted">[{m.get("start")}–{m.get("end")}] · {esc(dec.get("status", ""))} by '
            f'{esc(sel.get("label") or "a selector")} · confidence {float(dec.get("confidence") or 0):.2f}'
            f'{" · reused" if dec.get("reused") else ""}</span></div>'
            + (f'<p class="muted">evidence: {esc(why)}</p>' if why else "")
            + _llm(dec)
            + '<table><tr><th>sense</th><th>definition</th><th>probability</th></tr>'
            + "".join(rows) + "</table></div>")


def _llm(dec: Mapping[str, Any]) -> str:
    """An LLM decision's model and rationale, in words."""
    llm = dec.get("llm")
    if not llm:
        return ""
    model = (dec.get("selector") or {}).get("model") or "an LLM"
    why = f': <span dir="auto">{esc(llm["rationale"])}</span>' if llm.get("rationale") else ""
    return (f'<p class="muted">asked {esc(model)} ({esc(llm.get("template") or "")}, '
            f'{int(llm.get("tokens_in") or 0)} tokens in, {int(llm.get("tokens_out") or 0)} out){why}</p>')


def _q(iri: str) -> str:
    from urllib.parse import quote

    return quote(iri, safe="")


def _result_tables(r: Mapping[str, Any], english: Mapping[str, str]) -> str:
    cov = "".join(f'<tr><td>{_bdi(c.get("text", ""))}</td><td class="num">{float(c["coverage"]):.2f}</td>'
                  f'<td class="num">{float(c["weight"]):g}</td></tr>' for c in r.get("coverage", []))
    contrib = "".join(
        f'<tr><td>{_both(c.get("question_label", ""), english.get(c["question_concept"]))}</td>'
        f'<td>{esc("same concept" if c["relation"] is None else c["relation"].rsplit("#", 1)[-1])}</td>'
        f'<td>{_both(c.get("document_label", ""), english.get(c["document_concept"]))}</td>'
        f'<td class="num">{c["annotations"]}</td><td class="num">{c["counted"]:.3f}</td></tr>'
        for c in r.get("contributions", []))
    return (f'<h2>Why this document: relevance {float(r.get("relevance", 0)):.2f}</h2>'
            '<p class="muted">The relevance (0–1) is the expected share of the question\'s words whose '
            'meaning the document shares: for each word, the probabilities of its readings times the '
            'probability that the document means that reading; the focus word counts as the ranking '
            'weighs it.</p>'
            '<table><tr><th>word</th><th>share</th><th>weight</th></tr>' + cov + '</table>'
            f'<h2>Ranking score {float(r.get("score", 0)):.3f}</h2>'
            '<p class="muted">The sum of what each concept added (rarity, repetition and the focus '
            'boost weigh in; comparable within one answer only).</p>'
            '<table><tr><th>question concept</th><th>via</th><th>document concept</th>'
            '<th>annotations</th><th>counted</th></tr>' + contrib + "</table>")


def _documents(summary: Mapping[str, Any], english: Mapping[str, str]) -> str:
    docs = summary.get("documents", [])
    if not docs:
        return ""
    root = summary.get("root", "")
    items = "".join(
        f'<li><a href="/explain?iri={esc(_q(root))}&amp;document={esc(_q(d["iri"]))}">'
        f'{_bdi(d.get("title") or d.get("id"))}</a> <span class="muted">{esc(d.get("id", ""))} · '
        f'{esc(d.get("language", ""))} · via '
        + ", ".join(_both(c.get("label", ""), english.get(c["iri"])) for c in d.get("concepts", []))
        + "</span></li>" for d in docs)
    return f"<h2>Documents whose decisions chose these concepts ({len(docs)})</h2><ul>{items}</ul>"


def _lines(lines: Iterable[str]) -> str:
    """A text explanation, each line its own isolated paragraph."""
    return "".join(f'<div class="line" dir="auto">{esc(x)}</div>' for x in lines)


def explanation_page(ex: Explanation, english: Mapping[str, str] | None = None) -> str:
    """The page of one explanation (``english``: concept IRI → English label)."""
    english = english or {}
    s = ex.summary
    root = ex.root
    owner = s.get("owner") or {}
    if s.get("resource") is not None:
        body = "<table>" + "".join(
            f'<tr><td>{esc(r["predicate"].rsplit("#", 1)[-1].rsplit("/", 1)[-1])}</td>'
            f'<td dir="auto">{link(r["object"], r["object"]) if r["iri"] else esc(r["object"])}'
            f'{" <span class=muted>@" + esc(r["lang"]) + "</span>" if r["lang"] else ""}</td></tr>'
            for r in sorted(s["resource"], key=lambda r: (r["predicate"], r["object"]))) + "</table>"
        return layout(f"explain {root}", f"<h2>Explanation of {link(root, root)}</h2>{body}")
    if owner.get("kind") != "Question":
        return layout(f"explain {root}", f"<h2>Explanation of {link(root, root)}</h2>"
                      + _lines(ex.text().splitlines()), css=CSS)
    result = s.get("result")
    parts = [f'<h2>Explanation of the question {link(root, owner.get("id") or root)}</h2>',
             f'<p class="q" dir="auto">{esc(owner.get("text", ""))}</p>',
             f'<p class="muted">language {esc(owner.get("language", ""))} · read the graph left to '
             f'right; every box links to its own explanation</p>',
             f'<div class="graph">{explanation_svg(s, english)}</div>']
    if result is not None:
        parts.append(_result_tables(result, english))
    ambiguous = [m for m in s.get("mentions", []) if (m.get("decision") or {}).get("candidates")]
    if ambiguous:
        parts.append("<h2>Candidate senses</h2>")
        parts += [_candidates(m, english) for m in ambiguous]
    if result is None:
        parts.append(_documents(s, english))
    parts.append(f'<details><summary>as text</summary>{_lines(ex.text().splitlines())}</details>')
    return layout(f"explain {root}", "".join(parts), css=CSS)
