"""Run records of ``kg-rag eval wsd``: enough to compare models and prompts later.

``eval wsd --wsd llm`` (and ``llm,knowledge``, ``knowledge+llm``) writes one JSON file beside the
scores; ``--run-record PATH`` chooses it (also for the other modes), else it is
``OUT.run.json`` beside ``--predictions OUT.key.txt``, else
``wsd-run-<corpus>-<mode>-<UTC time>.json`` in the current directory. It holds:

- ``selector``: mode, agent name and version, ``model``, ``endpoint_host`` (the host only: no
  path, no user info, no API key), ``threshold`` (knowledge+llm);
- ``prompt``: template id (``wsd-v1`` or ``wsd-rich-v1``) and the SHA-256 of its shipped files;
- ``context_window``: sentences of context on each side (``--window``) and the largest prompt
  a request sent (tokens the API reported) — how much of the model's context window was used;
- ``scores``: the system's and the baselines' P/R/F1;
- ``llm``: requests, tokens in/out (from the API's ``usage``; 0 when a server sends none),
  calls per 1,000 mentions, latency, and ``cost`` when prices are given (``--price-in`` /
  ``--price-out``, per million tokens);
- ``requests``: each chat request that answered mentions (prompt SHA-256, tokens, latency,
  how many mentions it answered) — the token totals are their sums;
- ``items``: per scored instance its id, chosen key, gold keys, right, the selector that decided
  it and, when a request did, that request's hash, latency and the item's share of its tokens
  (a request's tokens split evenly over its mentions; the shares add up to the request's).

The file is written whole (a temporary file renamed into place): never half a record.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.eval.wsd import Item, WsdReport
from kg_rag.senses.mode import WsdMode
from kg_rag.senses.selective import probability

KIND = "kg-rag eval wsd run record"
VERSION = 1


def check_prices(price_in: float | None, price_out: float | None) -> None:
    """InputError unless both prices are given (or neither) and are finite and ≥ 0."""
    if (price_in is None) != (price_out is None):
        raise InputError("give both --price-in and --price-out (USD per million tokens), or neither")
    for name, v in (("--price-in", price_in), ("--price-out", price_out)):
        if v is not None and (not math.isfinite(v) or v < 0):
            raise InputError(f"{name} must be a price of 0 or more (USD per million tokens)")


def record_path(explicit: str | None, predictions: str | None, corpus: str, mode: WsdMode,
                when: datetime | None = None) -> Path | None:
    """Where the run record goes (None: no record — a mode without an LLM and no ``explicit``).
    InputError when its folder does not exist or it names a folder, before anything runs."""
    if explicit:
        path = Path(explicit)
    elif not mode.uses_llm:
        return None
    elif predictions:
        p = Path(predictions)
        stem = p.name[: -len(".key.txt")] if p.name.endswith(".key.txt") else p.stem
        path = p.with_name(stem + ".run.json")
    else:
        t = (when or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
        safe = "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in corpus) or "corpus"
        path = Path(f"wsd-run-{safe}-{mode.value.replace(',', '-').replace('+', '-')}-{t}.json")
    if path.is_dir():
        raise InputError(f"the run record {str(path)!r} is a folder; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"cannot write the run record {str(path)!r}: the folder "
                         f"{str(parent)!r} does not exist")
    return path


def _cost(tokens_in: int, tokens_out: int, price_in: float | None,
          price_out: float | None) -> float | None:
    if price_in is None or price_out is None:
        return None
    return round(tokens_in * price_in / 1e6 + tokens_out * price_out / 1e6, 8)


def _split(total: int, n: int, k: int) -> int:
    """The ``k``-th of ``n`` even integer shares of ``total`` (the first ones take the rest)."""
    base, rest = divmod(total, n)
    return base + (1 if k < rest else 0)


def build(report: WsdReport, *, mode: WsdMode, selector: Any, data: str, gold: str, window: int,
          price_in: float | None = None, price_out: float | None = None,
          when: datetime | None = None) -> dict[str, Any]:
    """The run record of ``report`` (see the module)."""
    from kg_rag.senses.llm.prompt import TEMPLATE, template_sha256

    agent = selector.agent
    # the LLM's template (knowledge+llm and llm,knowledge hold the LLM selector inside)
    llm = next((x for x in (selector, getattr(selector, "llm", None), getattr(selector, "primary", None))
                if isinstance(getattr(x, "template", None), str)), None)
    template = llm.template if llm is not None else TEMPLATE
    items = report.system.items
    # the requests behind the items: one per prompt hash (mentions of a request share it)
    requests: dict[str, dict[str, Any]] = {}
    members: dict[str, list[int]] = {}
    for n, it in enumerate(items):
        t = it.selection.llm if it.selection is not None else None
        if t is None:
            continue
        req = requests.setdefault(t.prompt_sha256, {
            "prompt_sha256": t.prompt_sha256, "template": t.template, "tokens_in": t.tokens_in,
            "tokens_out": t.tokens_out, "latency_ms": t.latency_ms, "mentions": 0})
        req["mentions"] += 1
        members.setdefault(t.prompt_sha256, []).append(n)
    share: dict[int, tuple[int, int]] = {}
    for h, idx in members.items():
        r = requests[h]
        for k, n in enumerate(idx):
            share[n] = (_split(r["tokens_in"], len(idx), k), _split(r["tokens_out"], len(idx), k))
    tokens_in = sum(r["tokens_in"] for r in requests.values())
    tokens_out = sum(r["tokens_out"] for r in requests.values())
    latencies = [r["latency_ms"] for r in requests.values()]
    llm_stats = report.llm.as_dict() if report.llm is not None else None
    if llm_stats is not None:
        llm_stats.update({
            "tokens_in_per_item": round(tokens_in / len(items), 1) if items else 0.0,
            "tokens_out_per_item": round(tokens_out / len(items), 1) if items else 0.0,
            "latency_ms": {"total": round(sum(latencies), 1),
                           "mean_per_request": round(sum(latencies) / len(latencies), 1)
                           if latencies else 0.0,
                           "max": round(max(latencies), 1) if latencies else 0.0},
            "cost": None})
        cost = _cost(llm_stats["tokens_in"], llm_stats["tokens_out"], price_in, price_out)
        if cost is not None:
            llm_stats["cost"] = {"currency": "USD", "price_in_per_million": price_in,
                                 "price_out_per_million": price_out, "total": cost,
                                 "per_1000_items": round(1000 * cost / len(items), 6)
                                 if items else 0.0}
    return {
        "kind": KIND, "version": VERSION,
        "created": (when or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "corpus": report.corpus, "data": Path(data).name, "gold": Path(gold).name,
        "lang": report.lang,
        "selector": {"mode": mode.value, "name": agent.name, "version": agent.version,
                     "model": agent.model, "endpoint_host": agent.endpoint_host,
                     "threshold": getattr(selector, "threshold", None)},
        "prompt": {"template": template, "sha256": template_sha256(template)}
        if mode.uses_llm else None,
        "context_window": {"sentences_each_side": window,
                           "max_prompt_tokens": max((r["tokens_in"] for r in requests.values()),
                                                    default=0)},
        "scores": {"system": report.system.total.as_dict(),
                   **{k: v.total.as_dict() for k, v in report.baselines.items()}},
        "llm": llm_stats,
        "requests": list(requests.values()),
        "items": [_item(it, share.get(n), price_in, price_out) for n, it in enumerate(items)],
        "problems": report.problems,
    }


def _item(it: Item, share: tuple[int, int] | None, price_in: float | None,
          price_out: float | None) -> dict[str, Any]:
    sel = it.selection
    d: dict[str, Any] = {"instance": it.instance, "chosen": it.chosen, "gold": list(it.gold),
                         "right": it.right, "candidates": it.candidates,
                         "agent": sel.agent.name if sel is not None else None,
                         "reason": sel.reason if sel is not None else "no candidates"}
    if sel is not None and sel.chosen is not None:
        # what the calibration tables are made of, per item: the chosen candidate's share of
        # the scores, and the stored confidence
        share_of = probability(sel)
        d["probability"] = round(share_of, 4) if share_of is not None else None
        d["confidence"] = round(sel.confidence, 4)
    if it.knowledge_probability is not None or it.asked_llm:
        d["asked_llm"] = it.asked_llm
        d["knowledge_probability"] = (round(it.knowledge_probability, 4)
                                      if it.knowledge_probability is not None else None)
        d["knowledge_right"] = it.knowledge_right
    t = sel.llm if sel is not None else None
    if t is not None and share is not None:
        d.update({"prompt_sha256": t.prompt_sha256, "tokens_in": share[0], "tokens_out": share[1],
                  "request_latency_ms": t.latency_ms})
        cost = _cost(share[0], share[1], price_in, price_out)
        if cost is not None:
            d["cost"] = cost
    return d


def write(path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` to ``path`` whole (temporary file, then rename)."""
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".run-", suffix=".json", dir=path.parent if str(path.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def set_default(store: Any, report: WsdReport, mode: WsdMode, selector: Any,
                force: bool) -> str:
    """``--set-default``: record ``mode`` as the store's default on this report's figures
    (:func:`kg_rag.senses.store_default.record_default`; ConfigError when it lost to the first
    sense and ``force`` is false). Returns the one-line description of the record."""
    from kg_rag.senses.store_default import record_default

    first = report.system if mode is WsdMode.FIRST_SENSE else report.baselines["first-sense"]
    rec = record_default(store, mode, selector.agent, report.system.total.f1, first.total.f1,
                         report.system.total.n, report.corpus, force=force)
    return rec.describe()


__all__ = ["build", "check_prices", "record_path", "set_default", "write"]
