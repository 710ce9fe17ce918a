"""``GET /docs``: the REST API's reference, rendered on the server from the OpenAPI document the
service serves at ``/openapi.json`` — nothing vendored, nothing fetched from elsewhere.

Every operation with its parameters, request body and responses; every schema as a table of its
fields (a ``$ref`` links to the schema's table); and a way to try it: a plain form for the GET
operations (their query parameters as fields), and for the JSON operations without a token (``/ask``,
``/annotate``) an editable example body sent by a few lines of same-origin script, the answer
shown under it. Everything from the document is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from kg_rag.service.openapi import openapi_document

METHODS = ("get", "post", "put", "patch", "delete")
#: example bodies for the operations a reader may send from the page
EXAMPLES: Mapping[str, Any] = {
    "ask": {"question": "הפירות העמיסו על הבדים", "language": "he", "k": 3, "focus": "הבדים",
            "min_score": 0.0},
    "annotate": {"text": "הפירות העמיסו על הבדים", "language": "he"},
}
#: example values for the GET forms
QUERY_EXAMPLES: Mapping[str, str] = {"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"}

CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:62rem;padding:1rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem;border-top:1px solid #eee;padding-top:1rem}
h3{font-size:1rem;margin:.8rem 0 .3rem}code,pre,textarea{font-family:ui-monospace,monospace;font-size:.85rem}
.op{border:1px solid #ddd;border-radius:.4rem;padding:.4rem .8rem;margin:1rem 0}
.method{display:inline-block;min-width:4rem;text-align:center;border-radius:.3rem;color:#fff;
font-weight:700;padding:0 .4rem;text-transform:uppercase;font-size:.8rem}
.get{background:#2563eb}.post{background:#059669}.delete{background:#dc2626}.put,.patch{background:#d97706}
table{border-collapse:collapse;width:100%}td,th{padding:.2rem .4rem;border-bottom:1px solid #eee;
text-align:start;vertical-align:top}.muted{color:#666;font-size:.9rem}
textarea{width:100%;box-sizing:border-box}pre.out{background:#f6f6f6;padding:.5rem;max-height:24rem;
overflow:auto;white-space:pre-wrap}ul.toc{columns:2}
"""

#: sends a try-it body to its operation (same origin) and shows the status and answer
SCRIPT = """
document.querySelectorAll('form.try-json').forEach(function (f) {
  f.addEventListener('submit', function (e) {
    e.preventDefault();
    var out = f.querySelector('pre.out');
    out.textContent = '…';
    fetch(f.dataset.path, {method: f.dataset.method, headers: {'Content-Type': 'application/json',
      'Accept': 'application/json'}, body: f.querySelector('textarea').value})
      .then(function (r) { return r.text().then(function (t) {
        var shown = t; try { shown = JSON.stringify(JSON.parse(t), null, 2); } catch (x) {}
        out.textContent = r.status + ' ' + r.statusText + '\\n' + shown; }); })
      .catch(function (x) { out.textContent = 'request failed: ' + x; });
  });
});
"""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def type_of(schema: Mapping[str, Any]) -> str:
    """A schema in a few words (HTML): its type, a linked ``$ref``, alternatives, constraints."""
    if not isinstance(schema, Mapping):   # true/false: anything / nothing
        return "any" if schema else "nothing"
    if "$ref" in schema:
        name = _ref_name(schema["$ref"])
        return f'<a href="#schema-{esc(name)}">{esc(name)}</a>'
    for key, word in (("oneOf", " or "), ("anyOf", " or "), ("allOf", " and ")):
        if key in schema:
            text = word.join(type_of(s) for s in schema[key])
            return text + (" or null" if schema.get("nullable") else "")
    t = schema.get("type", "any")
    if t == "array":
        text = f"array of {type_of(schema.get('items', {}))}"
    elif t == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        text = f"object of {type_of(schema['additionalProperties'])}"
    elif t == "object" and schema.get("properties"):
        text = "object with " + ", ".join(f"<code>{esc(k)}</code>" for k in schema["properties"])
    else:
        text = esc(t) + (f" ({esc(schema['format'])})" if "format" in schema else "")
    if "enum" in schema:
        text += ": " + ", ".join(f"<code>{esc(json.dumps(v))}</code>" for v in schema["enum"])
    bounds = [f"{k} {schema[k]}" for k in ("minimum", "maximum", "minLength", "maxLength",
                                             "minItems", "maxItems") if k in schema]
    if "default" in schema:
        bounds.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    if bounds:
        text += f' <span class="muted">({esc(", ".join(bounds))})</span>'
    if schema.get("nullable") and "enum" not in schema:
        text += " or null"
    return text


def fields(schema: Mapping[str, Any]) -> str:
    """An object schema's fields as a table; anything else as its type."""
    props = schema.get("properties")
    if not props:
        return f"<p>{type_of(schema)}</p>"
    required = set(schema.get("required", ()))
    rows = "".join(f'<tr><td><code>{esc(name)}</code>{" <b>*</b>" if name in required else ""}</td>'
                   f'<td>{type_of(s)}</td><td>{esc(s.get("description", ""))}</td></tr>'
                   for name, s in props.items())
    return ('<table><tr><th>field (<b>*</b> required)</th><th>type</th><th>description</th></tr>'
            f"{rows}</table>")


def _try_get(path: str, params: list[Mapping[str, Any]]) -> str:
    query = [p for p in params if p.get("in") == "query"]
    if "{" in path:
        return ""
    inputs = "".join(
        f'<label>{esc(p["name"])} <input name="{esc(p["name"])}" dir="auto" size="50" '
        f'value="{esc(QUERY_EXAMPLES.get(p["name"], ""))}"{" required" if p.get("required") else ""}>'
        f"</label><br>" for p in query if p.get("schema", {}).get("type") != "array")
    return (f'<h3>Try it</h3><form class="try-get" method="get" action="{esc(path)}">{inputs}'
            f"<button>GET {esc(path)}</button></form>")


def _try_json(path: str, method: str, op: Mapping[str, Any]) -> str:
    example = EXAMPLES.get(op.get("operationId", ""))
    if example is None or op.get("security"):
        return ""
    body = json.dumps(example, ensure_ascii=False, indent=2)
    return (f'<h3>Try it</h3><form class="try-json" data-path="{esc(path)}" '
            f'data-method="{esc(method.upper())}"><textarea rows="7" dir="auto" '
            f'aria-label="request body">{esc(body)}</textarea>'
            f'<button>{esc(method.upper())} {esc(path)}</button><pre class="out" aria-live="polite">'
            f"</pre></form>")


def operation(path: str, method: str, op: Mapping[str, Any]) -> str:
    anchor = f"op-{op.get('operationId', method + path)}"
    parts = [f'<div class="op" id="{esc(anchor)}"><h3><span class="method {esc(method)}">'
             f"{esc(method)}</span> <code>{esc(path)}</code> "
             f'<span class="muted">{esc(op.get("summary", ""))}</span></h3>']
    if op.get("description"):
        parts.append(f"<p>{esc(op['description'])}</p>")
    if op.get("security"):
        parts.append('<p class="muted">needs <code>Authorization: Bearer $KG_RAG_SERVICE_TOKEN</code></p>')
    params = op.get("parameters", [])
    if params:
        parts.append("<h3>Parameters</h3><table><tr><th>name</th><th>in</th><th>type</th>"
                     "<th>description</th></tr>" + "".join(
                         f'<tr><td><code>{esc(p["name"])}</code>{" <b>*</b>" if p.get("required") else ""}'
                         f'</td><td>{esc(p.get("in", ""))}</td><td>{type_of(p.get("schema", {}))}</td>'
                         f'<td>{esc(p.get("description", ""))}</td></tr>' for p in params) + "</table>")
    body = op.get("requestBody")
    if body:
        parts.append("<h3>Request body</h3>")
        for media, content in body.get("content", {}).items():
            parts.append(f"<p><code>{esc(media)}</code>: {type_of(content.get('schema', {}))}</p>")
    parts.append("<h3>Responses</h3><table>" + "".join(
        f"<tr><td><b>{esc(code)}</b></td><td>{esc(r.get('description', ''))}</td><td>"
        + ", ".join(f"<code>{esc(m)}</code> {type_of(c.get('schema', {}))}"
                    for m, c in r.get("content", {}).items()) + "</td></tr>"
        for code, r in op.get("responses", {}).items()) + "</table>")
    parts.append(_try_get(path, params) if method == "get" else _try_json(path, method, op))
    parts.append("</div>")
    return "".join(parts)


def docs_page(doc: Mapping[str, Any]) -> str:
    """The reference page of the OpenAPI document ``doc``."""
    info = doc.get("info", {})
    ops = [(path, m, item[m]) for path, item in doc.get("paths", {}).items() for m in METHODS if m in item]
    toc = "".join(f'<li><a href="#{esc("op-" + op.get("operationId", m + p))}"><span class="method '
                  f'{esc(m)}">{esc(m)}</span> <code>{esc(p)}</code></a></li>' for p, m, op in ops)
    schemas = doc.get("components", {}).get("schemas", {})
    body = "".join(operation(p, m, op) for p, m, op in ops)
    schema_html = "".join(f'<div id="schema-{esc(name)}"><h3>{esc(name)}</h3>{fields(s)}</div>'
                          for name, s in schemas.items())
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(info.get('title', 'API'))} API</title><style>{CSS}</style></head><body>"
            f'<h1><a href="/">{esc(info.get("title", ""))}</a> REST API '
            f'<span class="muted">{esc(info.get("version", ""))}</span></h1>'
            f'<p>{esc(info.get("description", ""))}</p>'
            f'<p class="muted">From the OpenAPI {esc(doc.get("openapi", ""))} document at '
            f'<a href="/openapi.json">/openapi.json</a>. Errors are RFC 7807 '
            f'<code>application/problem+json</code>.</p>'
            f'<ul class="toc">{toc}</ul><h2>Operations</h2>{body}<h2>Schemas</h2>{schema_html}'
            f"<script>{SCRIPT}</script></body></html>")


def docs_routes() -> list[Route]:
    page = docs_page(openapi_document())

    async def docs(request: Request) -> Response:
        return HTMLResponse(page)

    return [Route("/docs", docs, methods=["GET"])]
