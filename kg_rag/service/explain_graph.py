"""The explanation drawn as a graph: server-side SVG, no script, nothing fetched.

Columns, left to right: the question's **words** → their **annotations** (offsets, how many
readings) → the **decision** (the selector, every candidate with its probability as a bar, the
chosen one marked) → the chosen **concept** → the **documents** that mention it. For the
explanation of one result, the document column is that document, with its relevance, and each
word its share of it.

Every text is its own ``<text>`` element with its own direction (``direction="rtl"`` when its
first strong character is right-to-left, ``unicode-bidi="isolate"`` always), so a Hebrew label
beside an English one never reorders it; labels in the question's language come first, the
English label (the reader's) under it. Everything is escaped and stripped of raw bidi controls.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from kg_rag.text.normalise import is_rtl, strip_bidi

W, GAP, PAD = 160, 34, 12          # column width, gap between columns, padding
LINE = 17                          # text line height
COLUMNS = ("word", "annotation", "decision", "concept", "document")
MAX_DOCUMENTS = 8
MAX_WORDS = 40                     # rows drawn; a longer question says how many are left out
#: the knowledge selector's evidence names, in words
EVIDENCE = {"prior": "how common each sense is",
            "ppr": "closeness in the thesaurus to the other words' concepts",
            "lesk": "overlap of each sense's definition with the question"}


def _x(col: int) -> int:
    return PAD + col * (W + GAP)


def _fit(text: str, width: int = W - 20, size: int = 13) -> str:
    """``text`` cut to what fits ``width`` pixels at font ``size`` (about 0.62 em a character)."""
    n = max(4, int(width / (size * 0.62)))
    text = " ".join(strip_bidi(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _text(x: float, y: float, s: str, cls: str = "", size: int = 13, anchor: str = "middle") -> str:
    """One isolated run of text."""
    s = _fit(s, size=size)
    d = "rtl" if is_rtl(s) else "ltr"
    c = f' class="{cls}"' if cls else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}"{c} font-size="{size}" text-anchor="{anchor}" '
            f'direction="{d}" unicode-bidi="isolate">{html.escape(s)}</text>')


def _href(iri: str | None, document: str | None = None) -> str | None:
    if not iri:
        return None
    q = {"iri": iri} | ({"document": document} if document else {})
    return "/explain?" + urlencode(q, quote_via=quote)


@dataclass
class _Node:
    kind: str
    col: int
    y: int
    h: int
    body: list[str] = field(default_factory=list)
    href: str | None = None
    title: str = ""
    cls: str = ""

    @property
    def left(self) -> tuple[int, int]:
        return _x(self.col), self.y + self.h // 2

    @property
    def right(self) -> tuple[int, int]:
        return _x(self.col) + W, self.y + self.h // 2

    def svg(self) -> str:
        x = _x(self.col)
        box = (f'<rect x="{x}" y="{self.y}" width="{W}" height="{self.h}" rx="8" '
               f'class="box {self.kind}{" " + self.cls if self.cls else ""}"/>')
        tip = f"<title>{html.escape(strip_bidi(self.title))}</title>" if self.title else ""
        inner = tip + box + "".join(self.body)
        if self.href:
            inner = f'<a href="{html.escape(self.href)}">{inner}</a>'
        return f'<g class="node {self.kind}" data-kind="{self.kind}">{inner}</g>'


def _labels(col: int, y: int, label: str, english: str | None, cls: str = "label") -> list[str]:
    """The label in the question's language, and the English one under it when it differs."""
    cx = _x(col) + W / 2
    out = [_text(cx, y, label, cls)]
    if english and english != label:
        out.append(_text(cx, y + LINE, english, "english", 12))
    return out


def _edge(a: tuple[int, int], b: tuple[int, int], cls: str = "", label: str = "") -> str:
    (x1, y1), (x2, y2) = a, b
    mid = (x1 + x2) / 2
    path = (f'<path class="edge{" " + cls if cls else ""}" d="M{x1},{y1} C{mid},{y1} {mid},{y2} '
            f'{x2},{y2}" fill="none"/>')
    if label:
        path += _text(mid, (y1 + y2) / 2 - 4, label, "edge-label", 11)
    return path


def _evidence(reason: str) -> str:
    parts = [EVIDENCE.get(p.strip(), p.strip()) for p in reason.split("+") if p.strip()]
    return "; ".join(parts)


def explanation_svg(summary: Mapping[str, Any], english: Mapping[str, str]) -> str:
    """The SVG of a question's explanation (``summary`` as :meth:`Explanation.summary` has it;
    ``english``: concept IRI → English label)."""
    mentions = sorted(summary.get("mentions", []), key=lambda m: (m.get("start", 0), -m.get("end", 0)))
    left_out = max(0, len(mentions) - MAX_WORDS)
    mentions = mentions[:MAX_WORDS]
    result = summary.get("result")
    coverage = {(c.get("start"), c.get("end")): c for c in (result or {}).get("coverage", [])}
    nodes: list[_Node] = []
    edges: list[str] = []
    concept_nodes: dict[str, _Node] = {}
    y = 34
    for m in mentions:
        dec = m.get("decision") or {}
        cands = dec.get("candidates", [])
        dec_h = 2 * LINE + 14 + len(cands) * (2 * LINE + 8) if cands else 2 * LINE + 10
        row_h = max(dec_h, 2 * LINE + 18)
        cy = y + row_h // 2
        span = f"[{m.get('start')}–{m.get('end')}]"
        cov = coverage.get((m.get("start"), m.get("end")))
        word_body = [_text(_x(0) + W / 2, cy - 4, m.get("text") or "", "label word-text", 15),
                     _text(_x(0) + W / 2, cy + LINE - 2,
                           span + (f" · share {cov['coverage']:.2f}" if cov else ""), "muted", 11)]
        word = _Node("word", 0, cy - 24, 48, word_body, title=m.get("text") or "")
        n_read = len(m.get("candidates", []))
        ann = _Node("annotation", 1, cy - 24, 48,
                    [_text(_x(1) + W / 2, cy - 4, "annotation", "muted", 12),
                     _text(_x(1) + W / 2, cy + LINE - 2,
                           f"{n_read} reading{'s' if n_read != 1 else ''}", "", 12)],
                    _href(m.get("annotation")), m.get("annotation") or "")
        nodes += [word, ann]
        edges.append(_edge(word.right, ann.left))
        if cands:
            sel = dec.get("selector") or {}
            top = y + (row_h - dec_h) // 2
            body = [_text(_x(2) + W / 2, top + LINE, (sel.get("label") or "decision").replace("kg-rag ", ""),
                          "heading", 12),
                    _text(_x(2) + W / 2, top + 2 * LINE, f"confidence {float(dec.get('confidence') or 0):.2f}", "muted", 11)]
            cy2 = top + 2 * LINE + 14
            chosen = dec.get("chosen_concept")
            for c in cands:
                p = float(c.get("score") or 0)
                is_chosen = c.get("concept") == chosen
                body.append(f'<g class="candidate{" chosen" if is_chosen else ""}" '
                            f'data-probability="{p:.6f}">')
                label = ("✓ " if is_chosen else "") + (c.get("label") or c.get("concept", "").rsplit("/", 1)[-1])
                body.append(_text(_x(2) + (W - 40) / 2, cy2 + 4, label, "label", 13))
                body.append(_text(_x(2) + W - 8, cy2 + 4, f"{p:.2f}", "prob", 12, "end"))
                en = english.get(c.get("concept", ""))
                bar_y = cy2 + 10
                body.append(f'<rect class="bar-bg" x="{_x(2) + 8}" y="{bar_y}" width="{W - 16}" height="5" rx="2"/>'
                            f'<rect class="bar" x="{_x(2) + 8}" y="{bar_y}" width="{max(1.0, (W - 16) * p):.1f}" '
                            f'height="5" rx="2"/>')
                if en and en != c.get("label"):
                    body.append(_text(_x(2) + W / 2, cy2 + LINE + 11, en, "english", 11))
                body.append("</g>")
                cy2 += 2 * LINE + 8
            node = _Node("decision", 2, top, dec_h, body, _href(dec.get("iri")),
                         _evidence(dec.get("reason") or ""))
            nodes.append(node)
            edges.append(_edge(ann.right, node.left))
            before = node
        else:
            before = ann
        for c in m.get("concepts", []):
            cn = concept_nodes.get(c["iri"])
            if cn is None:
                cn = _Node("concept", 3, cy - 24, 48, _labels(3, cy - 2, c.get("label") or c["iri"],
                                                                 english.get(c["iri"])),
                           _href(c["iri"]), c["iri"])
                concept_nodes[c["iri"]] = cn
                nodes.append(cn)
            edges.append(_edge(before.right, cn.left, "chosen"))
        y += row_h + 18
    if left_out:
        edges.append(_text(_x(0) + W / 2, y, f"and {left_out} more words", "muted", 12))
        y += 24
    docs = summary.get("documents", [])
    if result is not None:
        docs = [d for d in docs if d.get("iri") == result.get("document")] or [
            {"iri": result.get("document"), "id": str(result.get("document", "")).rsplit("/", 1)[-1],
             "concepts": []}]
    dy = 34
    for d in docs[:MAX_DOCUMENTS]:
        sub = d.get("id") or ""
        if result is not None and "relevance" in result:
            sub = f"relevance {float(result['relevance']):.2f}"
        dn = _Node("document", 4, dy, 48, [
            _text(_x(4) + W / 2, dy + 20, d.get("title") or d.get("id") or "", "label", 13),
            _text(_x(4) + W / 2, dy + 20 + LINE, f"{sub} [{d.get('language', '')}]".strip(), "muted", 11)],
            _href(summary.get("root"), d.get("iri")) if result is None else _href(d.get("iri")),
            d.get("iri") or "")
        nodes.append(dn)
        linked = {c["iri"] for c in d.get("concepts", [])}
        if result is not None:   # the question concepts its links start from
            linked |= {x["question_concept"] for x in result.get("links", [])}
        for iri in sorted(linked):
            if iri in concept_nodes:
                edges.append(_edge(concept_nodes[iri].right, dn.left))
        dy += 60
    more = len(docs) - MAX_DOCUMENTS
    if more > 0:
        edges.append(_text(_x(4) + W / 2, dy + 10, f"and {more} more", "muted", 12))
        dy += 24
    height = max(y, dy) + 8
    width = _x(len(COLUMNS)) - GAP + PAD
    heads = "".join(_text(_x(i) + W / 2, 18, name, "column", 12) for i, name in enumerate(COLUMNS))
    return (f'<svg class="explanation-graph" role="img" aria-label="explanation graph" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'style="width:100%;max-width:{width}px;height:auto">{heads}{"".join(edges)}{"".join(n.svg() for n in nodes)}</svg>')


SVG_CSS = """
.graph{overflow-x:auto;border:1px solid #eee;border-radius:.4rem;padding:.3rem;background:#fcfcfc}
svg .box{fill:#fff;stroke:#94a3b8}svg .box.word{fill:#fef9c3}svg .box.decision{fill:#f8fafc}
svg .box.concept{fill:#ecfdf5;stroke:#10b981}svg .box.document{fill:#eff6ff;stroke:#60a5fa}
svg .edge{stroke:#94a3b8;stroke-width:1.5}svg .edge.chosen{stroke:#10b981;stroke-width:2.5}
svg text{fill:#222;font-family:system-ui,sans-serif}svg .muted,svg .english{fill:#666}
svg .column{fill:#888;text-transform:uppercase;letter-spacing:.05em}
svg .heading{font-weight:600}svg .chosen .label{font-weight:700;fill:#047857}
svg .bar-bg{fill:#e5e7eb}svg .bar{fill:#60a5fa}svg .chosen .bar{fill:#10b981}
svg .prob{font-variant-numeric:tabular-nums}svg .edge-label{fill:#666}
svg a:hover .box{stroke:#2563eb;stroke-width:2}
"""
