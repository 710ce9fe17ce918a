"""No false refusal from the update pre-flight (:mod:`kg_rag.service.preflight`) or the guard's
caps: every W3C SPARQL 1.1 update (``../shared``) and every query and update of this repository
(``sparql/``) passes the guard at its default caps, and every update passes the pre-flight —
checked, as in the service, from a worker thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pyoxigraph

from kg_rag.errors import KgRagError, QueryError
from kg_rag.service.preflight import UpdateRefused, preflight
from kg_rag.settings import Settings
from kg_rag.store import queries
from kg_rag.store.guard import check_query, check_update

DEFAULTS = Settings()


def _preflight_all(texts: dict[str, str]) -> dict[str, KgRagError]:
    failed: dict[str, KgRagError] = {}

    def run() -> None:
        for name, text in texts.items():
            try:
                preflight(text, "http://example.org/base/", 10)
            except KgRagError as e:
                failed[name] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return failed


def test_w3c_updates_pass_the_preflight(shared_data: Path) -> None:
    root = shared_data / "w3c" / "sparql" / "sparql11"
    texts = {str(f.relative_to(root)): f.read_text(encoding="utf-8", errors="replace")
             for f in sorted(root.rglob("*.ru"))
             if not ("negative" in f.name or "bad" in f.name or "syntax-update-2" in str(f))}
    assert len(texts) > 100
    failed = _preflight_all(texts)
    # nothing crashed, timed out or could not be checked; what the engine itself reads as a
    # syntax error (blank nodes in DELETE, …) is that syntax error (400), and nothing else is
    assert {n: str(e) for n, e in failed.items()
            if isinstance(e, UpdateRefused) or not isinstance(e, QueryError)} == {}
    assert set(failed) == {n for n, text in texts.items() if _engine_refuses(text)}


def _engine_refuses(text: str) -> bool:
    try:
        pyoxigraph.Store().update(text, base_iri="http://example.org/base/")
    except SyntaxError:
        return True
    except (OSError, RuntimeError, ValueError):
        pass
    return False


def test_the_repositorys_own_queries_and_updates_pass_the_guard_and_the_preflight() -> None:
    assert len(queries.names()) > 50
    updates = {}
    for name in queries.names():
        q = queries.get(name)     # the text the store runs: the prefixes in front
        if q.is_update:
            check_update(q.text, 10**7, DEFAULTS.max_query_depth, DEFAULTS.max_query_chain)
            updates[name] = q.text
        else:
            check_query(q.text, 10**7, DEFAULTS.max_query_depth, DEFAULTS.max_query_chain)
    assert updates
    assert {n: str(e) for n, e in _preflight_all(updates).items()} == {}
