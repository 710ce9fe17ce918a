"""The query form a browser gets at ``GET /sparql`` (a plain HTML form with examples, no
JavaScript, no external resources); other clients get the service description there."""

from __future__ import annotations

import html

from kg_rag.text.normalise import strip_bidi

#: (title, query) shown as examples; each fills the form through a link
EXAMPLES: tuple[tuple[str, str], ...] = (
    ("count every statement (the default graph is the union of the graphs)",
     "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"),
    ("statements per graph (each source and document has its own)",
     "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }\nGROUP BY ?g ORDER BY DESC(?n) LIMIT 20"),
    ("concepts with their Hebrew and English labels",
     'SELECT ?c ?he ?en WHERE {\n  ?c skos:prefLabel ?he . FILTER(lang(?he) = "he")\n'
     '  OPTIONAL { ?c skos:prefLabel ?en . FILTER(lang(?en) = "en") }\n} LIMIT 20'),
    ("indexed documents",
     "SELECT ?doc ?id ?title WHERE { ?doc a kgr:Document ; dct:identifier ?id .\n"
     "  OPTIONAL { ?doc dct:title ?title } } ORDER BY ?id LIMIT 20"),
)
FORMATS = ("json", "csv", "tsv", "xml")


def _esc(text: str) -> str:
    return html.escape(strip_bidi(text), quote=True)


def wants_html(accept: str | None) -> bool:
    """True when the Accept header names HTML itself (a browser), not only through ``*/*``."""
    for part in (accept or "").split(","):
        fields = [f.strip() for f in part.split(";")]
        if fields[0].lower() in ("text/html", "application/xhtml+xml"):
            q = next((f[2:] for f in fields[1:] if f.startswith("q=")), "1")
            try:
                return float(q) > 0
            except ValueError:
                return False
    return False


def query_form_page(query: str = "", prefixes: tuple[str, ...] = ()) -> str:
    first = query or EXAMPLES[0][1]
    examples = "".join(
        f'<li><a href="/sparql?example={i}">{_esc(title)}</a>'
        f"<pre>{_esc(text)}</pre></li>" for i, (title, text) in enumerate(EXAMPLES))
    formats = "".join(f'<option value="{f}">{f}</option>' for f in FORMATS)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>kg-rag SPARQL</title><style>"
        "body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem}"
        "textarea{width:100%;font:14px/1.4 monospace}pre{background:#f6f6f6;padding:.4rem;"
        "white-space:pre-wrap}.muted{color:#666;font-size:.9rem}</style></head><body>"
        '<h1><a href="/">kg-rag</a> — SPARQL</h1>'
        '<form method="get" action="/sparql">'
        f'<textarea name="query" rows="10" dir="auto" aria-label="query">{_esc(first)}</textarea>'
        f'<p><label>answer as <select name="format">{formats}</select></label> '
        "<button>Run</button></p></form>"
        f'<p class="muted">Read-only. Predeclared prefixes: {_esc(" ".join(prefixes))}. A query '
        "that names no dataset (no FROM, default-graph-uri or named-graph-uri) sees the union of "
        "all graphs as its default graph; GRAPH ?g names each source and document. Programs: "
        "the SPARQL 1.1 Protocol at this URL; without a query and without asking for HTML, it "
        "answers the service description (Turtle).</p>"
        f"<h2>Examples</h2><ul>{examples}</ul></body></html>")
