"""The SPARQL guard over the W3C SPARQL 1.1 test queries and updates (``../shared``): it refuses
exactly those that fetch from elsewhere (``SERVICE``, ``LOAD``) and lets every other one through
— no false refusal from its tokens, nesting or chain caps."""

from __future__ import annotations

import re
from pathlib import Path

from kg_rag.errors import QueryError
from kg_rag.store.guard import DEFAULT_MAX_CHAIN, QueryRefused, check_query, check_update

_OUTBOUND = re.compile(r"\b(SERVICE|LOAD)\b", re.I)


def test_w3c_queries_and_updates(shared_data: Path) -> None:
    root = shared_data / "w3c" / "sparql" / "sparql11"
    checked, wrong = 0, []
    for f in sorted([*root.rglob("*.rq"), *root.rglob("*.ru")]):
        if "negative" in f.name or "bad" in f.name or "syntax-update-2" in str(f):
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        check = check_update if f.suffix == ".ru" else check_query
        fetches = bool(_OUTBOUND.search(re.sub(r"#[^\n]*|\"[^\"\n]*\"|<[^>\s]*>", " ", text)))
        try:
            check(text, 10_000_000, 64, DEFAULT_MAX_CHAIN)
            refused = False
        except QueryRefused:
            refused = True
        except QueryError as e:
            wrong.append(f"{f.relative_to(root)}: {e}")
            continue
        checked += 1
        if refused != fetches:
            wrong.append(f"{f.relative_to(root)}: {'refused' if refused else 'passed'}")
    assert checked > 400
    assert wrong == []
