"""The line between the API and the internals: the adapters (``kg_rag/cli/``, ``kg_rag/service/``,
``kg_rag/langchain.py``) import from kg-rag only the façade, its result types, the errors and
a few display helpers — read from the source with ``ast``, so a forgotten import anywhere in a
function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "kg_rag"
ADAPTERS = sorted([*(PACKAGE / "cli").glob("*.py"), *(PACKAGE / "service").glob("*.py"),
                   PACKAGE / "langchain.py"])

#: what any adapter may import: the package itself (its __all__), the façade, the result types
#: and errors, the settings, answers as JSON, display helpers and the readers of uploaded files
ALLOWED = {"kg_rag", "kg_rag.api", "kg_rag.model", "kg_rag.errors", "kg_rag.settings",
           "kg_rag.explain", "kg_rag.serialize"}
#: packages whose modules any adapter may import
ALLOWED_PACKAGES = ("kg_rag.text", "kg_rag.documents")
#: further imports, each with its reason: (adapter file, module) → why
EXCEPTIONS = {
    # the eval commands are the front of the evaluation harness, which is not an adapter
    ("cli/evaluate.py", "kg_rag.eval.corpus"): "eval wsd counts the corpus' instances",
    ("cli/evaluate.py", "kg_rag.eval.report"): "eval wsd prints the harness' table",
    ("cli/evaluate.py", "kg_rag.eval.wsd"): "eval wsd runs the harness",
    ("cli/evaluate.py", "kg_rag.eval.runs"): "eval wsd writes run records and sets the store's default",
    ("cli/eval_retrieval.py", "kg_rag.eval.retrieval"): "eval retrieval runs the harness",
    ("cli/demo.py", "kg_rag.resources"): "the demo loads the bundled demo files",
    ("cli/serve.py", "kg_rag.service"): "serve runs the service, another adapter",
    ("cli/serve.py", "kg_rag.store.serving"):
        "serve says in the embedded store's folder that it holds it, which open_store reads so "
        "that other commands work through the service (one file, written and removed by serve)",
    ("cli/query.py", "kg_rag.store.guard"):
        "the SPARQL guard is one pure text check for every path that runs a user's SPARQL (the "
        "store runs it too); `kg-rag sparql` refuses before it opens the store",
    ("service/guard.py", "kg_rag.store.guard"):
        "the endpoint checks a query with the same guard before it forks a query child",
    ("service/worker.py", "kg_rag.store.embedded"):
        "a query child holds the raw engine (Store.on_engine) and runs the user's query through "
        "the store layer's one user_query: dataset, union default graph, prefixes, syntax errors",
    ("service/worker.py", "kg_rag.store.prologue"):
        "a remote endpoint gets the same predeclared prefixes, and its errors the user's positions",
    ("service/worker.py", "kg_rag.store.http"):
        "a remote endpoint is asked with the store layer's total deadline and its check that a "
        "200 answer is complete (X-SQL-State, X-SPARQL-MaxRows)",
    ("service/preflight.py", "kg_rag.store.prologue"):
        "the update's checking child parses it with the prefixes the store predeclares for it, "
        "and its syntax error reads as the store's would",
    ("service/description.py", "kg_rag.store.prologue"):
        "the service description names the prefixes the endpoint predeclares",
    ("service/sparql_endpoint.py", "kg_rag.store.prologue"):
        "the query form names the prefixes the endpoint predeclares",
    ("service/sparql_endpoint.py", "kg_rag.store.render"):
        "the SPARQL protocol's using-graph-uri IRIs are rendered into the user's update by the "
        "one audited term renderer",
}


def _own_package(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    return ".".join(rel.parts[:-1]) if path.name != "langchain.py" else "kg_rag.langchain"


def kg_rag_imports(path: Path) -> set[str]:
    """Every module of kg_rag or loaders that ``path`` imports (at any depth of the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (the house imports absolutely)"
            names = [node.module or ""]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] in ("kg_rag", "loaders")}
    return found


def violations(path: Path) -> list[str]:
    own = _own_package(path)
    rel = path.relative_to(PACKAGE).as_posix()
    bad = []
    for module in sorted(kg_rag_imports(path)):
        if (module in ALLOWED or module.startswith(tuple(p + "." for p in ALLOWED_PACKAGES))
                or module in ALLOWED_PACKAGES or module == own or module.startswith(own + ".")
                or (rel, module) in EXCEPTIONS):
            continue
        bad.append(f"{rel} imports {module}")
    return bad


@pytest.mark.parametrize("path", ADAPTERS, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_adapter_imports_only_the_facade(path: Path) -> None:
    assert violations(path) == [], "go through kg_rag.api.KnowledgeGraph (or add the reason here)"


def test_every_exception_is_still_needed() -> None:
    for (rel, module), why in EXCEPTIONS.items():
        assert module in kg_rag_imports(PACKAGE / rel), f"{rel} no longer needs {module} ({why})"


def test_the_check_sees_internal_imports(tmp_path: Path) -> None:
    # the check itself: a function-local import of an internal module is found
    probe = PACKAGE / "cli" / "ask.py"
    text = probe.read_text(encoding="utf-8") + (
        "\n\ndef _probe() -> None:\n    from kg_rag.pipeline.retrieve import concept_labels\n"
        "    import loaders\n")
    fake = tmp_path / "ask.py"
    fake.write_text(text, encoding="utf-8")
    found = kg_rag_imports(fake)
    assert {"kg_rag.pipeline.retrieve", "loaders"} <= found
    assert "kg_rag.pipeline.retrieve" not in ALLOWED and "loaders" not in ALLOWED
