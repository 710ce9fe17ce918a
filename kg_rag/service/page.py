"""The explanation page (``GET /``): a question box and, for a question, its mentions, each
ambiguous mention's candidate senses (definition, score, the chosen one with its selector, an
LLM's rationale and model) and the retrieved documents with the matched passages highlighted.

Server-rendered, no JavaScript, no external resources; every text is HTML-escaped and stripped of
raw bidi controls, and every text element gets ``dir="auto"`` so Hebrew and Arabic read
right-to-left. Each element links to ``/explain?iri=…`` for its IRI.
"""

from __future__ import annotations

import html
import logging
from typing import Any
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from kg_rag import Answer, WsdMode
from kg_rag.api import KnowledgeGraph
from kg_rag.errors import InputError, KgRagError, NotFoundError
from kg_rag.serialize import answer_dict
from kg_rag.service.bodies import query_params
from kg_rag.service.problems import short_detail
from kg_rag.settings import Settings
from kg_rag.text.langid import check_language
from kg_rag.text.normalise import strip_bidi

log = logging.getLogger(__name__)

CSS = """
body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.6rem}
form{display:flex;gap:.5rem;flex-wrap:wrap}input[name=q]{flex:1 1 24rem;font-size:1.1rem;padding:.4rem}
select,button{font-size:1rem;padding:.3rem}
.q{font-size:1.5rem;padding:.6rem;background:#f6f6f6;border-radius:.4rem}
mark{background:#fde68a;padding:0 .1rem;border-radius:.2rem}mark a{color:inherit;text-decoration:none}
.mention{border:1px solid #ddd;border-radius:.4rem;padding:.5rem .8rem;margin:.6rem 0}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .4rem;border-bottom:1px solid #eee;
text-align:start;vertical-align:top}tr.chosen{background:#ecfdf5;font-weight:600}
.score{font-variant-numeric:tabular-nums;white-space:nowrap}.muted{color:#666;font-size:.9rem}
.result{border-inline-start:4px solid #93c5fd;padding:.2rem .8rem;margin:.8rem 0}
.error{background:#fee2e2;padding:.6rem;border-radius:.4rem}
"""
LANGS = ("auto", "he", "en", "de", "fr", "es", "ar")
#: the page's selector menu: the default, then every mode but the random baseline
SELECTORS = ("", *(m.value for m in WsdMode if m is not WsdMode.RANDOM))
#: the version the pipeline gives a decision it reused from the store (its maker's is not kept)
STORED_VERSION = "stored"


def esc(value: object) -> str:
    """HTML-escaped text without raw bidi controls."""
    return html.escape(strip_bidi(str(value)), quote=True)


def explain_href(iri: str) -> str:
    return "/explain?" + urlencode({"iri": iri}, quote_via=quote)


def link(iri: str | None, text: str, cls: str = "") -> str:
    if not iri:
        return esc(text)
    c = f' class="{cls}"' if cls else ""
    return f'<a{c} href="{esc(explain_href(iri))}" title="{esc(iri)}">{esc(text)}</a>'


def highlighted(text: str, spans: list[tuple[int, int, str | None]]) -> str:
    """``text`` with the (start, end, iri) spans wrapped in <mark> (overlaps are skipped)."""
    out: list[str] = []
    pos = 0
    for start, end, iri in sorted(spans):
        if start < pos or end > len(text) or start >= end:
            continue
        out.append(esc(text[pos:start]))
        inner = link(iri, text[start:end]) if iri else esc(text[start:end])
        out.append(f"<mark>{inner}</mark>")
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)


def layout(title: str, body: str, css: str = "") -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}{css}</style></head><body>"
            f'<h1><a href="/">kg-rag</a> — explainable retrieval</h1>{body}'
            f'<p class="muted">Everything here is in the knowledge graph: '
            f'<a href="/sparql">SPARQL endpoint</a> · <a href="/docs">REST API</a> (<a href="/openapi.json">OpenAPI</a>)</p>'
            f"</body></html>")


def question_form(q: str, lang: str, wsd: str) -> str:
    """The question box; a language or selector the menus do not list (a valid one given in the
    URL: ``lang=it``, ``wsd=random``) is added to its menu, selected."""
    langs = "".join(f'<option{" selected" if x == lang else ""}>{esc(x)}</option>'
                    for x in (*LANGS, *([lang] if lang and lang not in LANGS else [])))
    sels = "".join(f'<option value="{esc(x)}"{" selected" if x == wsd else ""}>'
                   f'{esc(x or "default selector")}</option>'
                   for x in (*SELECTORS, *([wsd] if wsd not in SELECTORS else [])))
    return (f'<form method="get" action="/"><input name="q" dir="auto" value="{esc(q)}" '
            f'placeholder="Ask in any language" aria-label="question" required>'
            f'<select name="lang" aria-label="language">{langs}</select>'
            f'<select name="wsd" aria-label="sense selector">{sels}</select>'
            f"<button>Ask</button></form>")


def _decisions_by_span(summary: dict[str, Any]) -> dict[tuple[int, int], dict[str, Any]]:
    out = {}
    for m in summary.get("mentions", []):
        if "start" in m and m.get("decision"):
            out[(m["start"], m["end"])] = m["decision"]
    return out


def mention_block(m: dict[str, Any], dec: dict[str, Any] | None, labels: dict[str, str],
                  english: dict[str, str]) -> str:
    chosen = (m.get("chosen") or {}).get("concept")
    head = (f'<div class="mention"><div><b dir="auto">{link(m.get("decision"), m["text"])}</b> '
            f'<span class="muted">[{m["start"]}–{m["end"]}] '
            f'{"ambiguous, " + str(len(m["candidates"])) + " candidates" if m.get("ambiguous") else "one reading"}'
            f"</span></div>")
    defs = {c["concept"]: c for c in (dec or {}).get("candidates", [])}
    rows = []
    for c in m["candidates"]:
        d = defs.get(c["concept"], {})
        label = d.get("label") or labels.get(c["concept"]) or c.get("lemma") or c["concept"]
        en = english.get(c["concept"])
        if en and en != label:
            label = f"{label} · {en}"
        is_chosen = c["concept"] == chosen
        mark = "✓ " if is_chosen else ""
        score = c.get("score", d.get("score"))
        rows.append(
            f'<tr class="{"chosen" if is_chosen else ""}"><td>{mark}{link(c["concept"], label)}'
            f'{" " + link(c.get("sense"), "sense", "muted") if c.get("sense") else ""}</td>'
            f'<td dir="auto">{esc(d.get("definition", ""))}</td>'
            f'<td class="score">{"" if score is None else f"{float(score):.3f}"}</td></tr>')
    table = ('<table><tr><th>sense</th><th>definition</th><th>score</th></tr>'
             + "".join(rows) + "</table>")
    sel = m.get("selector")
    who = ""
    if sel:
        verb = "chosen by" if chosen else "left undecided by"
        who = (f'<p>{verb} <b>{esc(sel.get("name"))}</b> selector{selector_version(sel)}'
               + (f', model <b>{esc(sel["model"])}</b>' if sel.get("model") else "")
               + (f', confidence {float(m["confidence"]):.2f}' if m.get("confidence") is not None
                  else "")
               + (" (decision reused)" if m.get("reused") else "") + "</p>")
        if m.get("rationale"):
            who += f'<p dir="auto">rationale: {esc(m["rationale"])}</p>'
        if m.get("reason"):
            who += f'<p class="muted" dir="auto">{esc(m["reason"])}</p>'
    return head + table + who + "</div>"


def selector_version(sel: dict[str, Any]) -> str:
    """`` v1.2`` for a selector's version; nothing when the decision was reused from the store,
    whose record does not say which version made it (the pipeline marks it ``stored``)."""
    version = str(sel.get("version") or "")
    if not version or version == STORED_VERSION:
        return ""
    return f" v{esc(version)}"


def loaded_block(sources: list[dict[str, Any]], stats: dict[str, Any]) -> str:
    """What the store holds: each source (file name, kind, languages, entities) and the number
    of documents; the file's path on the indexing machine is not shown."""
    docs = int(stats.get("documents", 0))
    head = (f'<h2>What is loaded</h2><p>{docs} document{"" if docs == 1 else "s"} indexed · '
            f'{int(stats.get("triples", 0))} statements · {len(sources)} '
            f'source{"" if len(sources) == 1 else "s"}</p>')
    if not sources:
        return head + ('<p class="muted">No thesaurus or dictionary is loaded: run '
                       '<code>kg-rag demo</code> or <code>kg-rag load FILE</code>.</p>')
    rows = "".join(
        f'<tr><td dir="auto">{esc(s.get("title") or s.get("graph", ""))}</td>'
        f'<td>{esc(s.get("kind", ""))}</td>'
        f'<td>{esc(", ".join(s.get("languages") or ()) or "—")}</td>'
        f'<td class="score">{int(s.get("entities") or 0)}</td>'
        f'<td class="score">{int(s.get("triples") or 0)}</td></tr>'
        for s in sources)
    return (head + '<table class="sources"><tr><th>source</th><th>kind</th><th>languages</th>'
            '<th>entities</th><th>statements</th></tr>' + rows + "</table>")


def merged(spans: list[list[int]]) -> list[tuple[int, int, str | None]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e, None) for s, e in out]


def result_block(r: dict[str, Any], question_iri: str | None) -> str:
    """One result; ``question_iri`` None when the question is not recorded (no "why?" link)."""
    spans = merged(r.get("highlights", []))
    concepts = ", ".join(link(c["iri"], c.get("label") or c["iri"]) for c in r.get("concepts", []))
    why = ""
    if question_iri is not None:
        href = "/explain?" + urlencode({"iri": question_iri, "document": r["iri"]}, quote_via=quote)
        why = f' · <a class="why" href="{esc(href)}">why?</a>'
    return (f'<div class="result"><div><b dir="auto">{link(r["iri"], r.get("title") or r["id"])}'
            f'</b> <span class="muted">{esc(r["id"])} · {esc(r.get("lang", ""))} · '
            f'<span class="score" title="relevance 0–1: the expected share of the question\'s '
            f'words whose meaning the document shares (ranking score {float(r["score"]):.3f})">'
            f'relevance {float(r.get("relevance", 0.0)):.2f}</span>{why}</span></div>'
            f'<p dir="auto" class="passage">{highlighted(r.get("passage", ""), spans)}</p>'
            f'<div class="muted">via {concepts or "—"}</div></div>')


def answer_page(q: str, lang: str, wsd: str, answer: dict[str, Any],
                summary: dict[str, Any], labels: dict[str, str], english: dict[str, str],
                recorded: bool = True) -> str:
    decisions = _decisions_by_span(summary)
    # a question that is not recorded has no explanation to link to, nor do the decisions it
    # made anew
    question_iri = answer["question_iri"] if recorded else None
    mentions = [m if recorded or m.get("reused") else {**m, "decision": None}
                for m in answer["mentions"]]
    spans = [(m["start"], m["end"], m.get("decision") or (m.get("chosen") or {}).get("concept"))
             for m in mentions]
    parts = [question_form(q, lang, wsd),
             f'<h2>Question <span class="muted">({esc(answer["lang"])}, selector '
             f'{esc(answer["wsd"])}) {link(question_iri, "explain")}</span></h2>',
             f'<p class="q" dir="auto">{highlighted(answer["question"], spans)}</p>',
             *([f'<p class="muted">language: {esc(language["note"])}</p>']
               if (language := answer.get("language")) and language.get("source") != "given" else []),
             "<h2>Mentions and senses</h2>"]
    parts += [mention_block(m, decisions.get((m["start"], m["end"])), labels, english)
              for m in mentions]
    parts.append(f'<h2>Documents ({len(answer["results"])})</h2>')
    parts += ([result_block(r, question_iri) for r in answer["results"]]
              or [f'<p>No document matched: {esc(answer.get("reason") or "no document matches")}.</p>'])
    return layout(f"kg-rag: {q}", "".join(parts))


def error_page(q: str, lang: str, wsd: str, err: KgRagError) -> str:
    """The question box and the error in one line (cut as a problem's detail is)."""
    return layout("kg-rag", question_form(q, lang, wsd)
                  + f'<p class="error" dir="auto"><b>{esc(err.title)}</b>: '
                    f'{esc(short_detail(str(err)))}</p>')


def page_parameters(request: Request) -> tuple[str, str, str]:
    """The page's ``q``, ``lang`` and ``wsd``, checked as ``POST /ask`` checks them (InputError:
    a language it does not support, an unknown selector, a parameter that is not UTF-8);
    ``lang`` and ``wsd`` normalised (``EN`` → ``en``, ``knowledge llm`` → ``knowledge+llm``)."""
    params = query_params(request)
    q = params.get("q", "")
    lang = params.get("lang", "auto").strip() or "auto"
    wsd = params.get("wsd", "").strip()
    if lang.lower() != "auto":
        lang = check_language(lang)
    else:
        lang = "auto"
    return q, lang, WsdMode.parse(wsd).value if wsd else ""


def unrecorded_summary(kg: KnowledgeGraph, answer: Answer) -> dict[str, Any]:
    """What the page shows of a question the store does not hold: each mention's candidates with
    their definitions, read from the store in one query (nothing is written)."""
    definitions = kg.glosses([c.concept for r in answer.mentions for c in r.mention.candidates],
                             answer.lang, width=400)
    mentions = []
    for r in answer.mentions:
        candidates = [{"concept": c.concept, "definition": definitions.get(c.concept, "")}
                      for c in r.mention.candidates]
        mentions.append({"start": r.mention.start, "end": r.mention.end,
                         "decision": {"candidates": candidates}})
    return {"mentions": mentions}


def page_routes(kg: KnowledgeGraph, config: Settings) -> list[Route]:
    def compute(q: str, lang: str, wsd: str) -> tuple[Any, ...]:
        # the page never writes (issue 21): the question is explained from the store only when
        # it was recorded before (by POST /ask with recording on, or the CLI)
        answer = kg.ask(q, lang=None if lang == "auto" else lang, k=5,
                        wsd=WsdMode.parse(wsd) if wsd else None, record_question=False)
        # a question with no known concept has nothing to explain; one not recorded is shown
        # from the store (nothing written)
        try:
            summary, recorded = (kg.explain(answer.question_iri).summary, True) if answer.question_iri \
                else ({}, False)
        except NotFoundError:
            summary, recorded = unrecorded_summary(kg, answer), False
        concepts = [c.concept for r in answer.mentions for c in r.mention.candidates]
        labels = kg.labels(concepts, answer.lang)
        english = kg.labels(concepts, "en") if answer.lang != "en" else {}
        return answer_dict(answer), summary, labels, english, recorded

    async def index(request: Request) -> Response:
        try:
            q, lang, wsd = page_parameters(request)
        except InputError as e:   # shown on the page, the box filled as far as it can be
            shown = request.query_params
            return HTMLResponse(error_page(shown.get("q", ""), "auto", "", e), status_code=e.http_status)
        if not q.strip():
            sources, stats = await run_in_threadpool(lambda: (kg.sources(), kg.stats()))
            return HTMLResponse(layout("kg-rag", question_form("", lang, wsd)
                                       + '<p class="muted">Try: <a href="/?q=%D7%94%D7%A4%D7%99'
                                       '%D7%A8%D7%95%D7%AA%20%D7%94%D7%A2%D7%9E%D7%99%D7%A1%D7'
                                       '%95%20%D7%A2%D7%9C%20%D7%94%D7%91%D7%93%D7%99%D7%9D" '
                                       'dir="rtl">הפירות העמיסו על הבדים</a></p>'
                                       + loaded_block(sources, stats)))
        try:
            answer, summary, labels, english, recorded = await run_in_threadpool(compute, q, lang, wsd)
        except KgRagError as e:
            return HTMLResponse(error_page(q, lang, wsd, e), status_code=e.http_status)
        return HTMLResponse(answer_page(q, lang, wsd, answer, summary, labels, english, recorded))

    return [Route("/", index, methods=["GET"])]
