"""``make eval`` against an earlier run: did a change help, set by set, beyond noise?

Each run of :mod:`kg_rag.eval.report` writes ``runs.json`` beside its tables: per WSD set, every
scored instance's result for the knowledge selector (right = 1, else 0); per retrieval set, every
judged query's nDCG@10 and P@1 per mode. The next run compares itself with it — the previous run
in the same folder, or one named with ``--baseline`` — pair by pair with
:func:`kg_rag.eval.significance.paired` (the difference, its paired-bootstrap 95 % interval,
how many instances or queries moved each way, the paired randomization test), and writes those
lines into ``wsd.md`` and ``retrieval.md`` under each set. Only instances and queries both runs
scored are compared; a set the baseline lacks says so.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.eval.retrieval import RetrievalReport
from kg_rag.eval.significance import paired
from kg_rag.eval.wsd import WsdReport

#: the file a run leaves in its output folder
RUNS = "runs.json"
FORMAT = 1
#: the retrieval metrics kept per query
METRICS = ("ndcg@10", "p@1")


def record(wsd: list[tuple[str, WsdReport]], retrieval: list[tuple[str, RetrievalReport]],
           commit: str | None) -> dict[str, Any]:
    """What a later run compares itself with."""
    return {
        "format": FORMAT,
        "made": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "wsd": {name: {"system": rep.system.name, "right": rep.system.right} for name, rep in wsd},
        "retrieval": {name: {mode: {q: {m: v[m] for m in METRICS if m in v} for q, v in per.items()}
                             for mode, per in rep.per_query.items()}
                      for name, rep in retrieval},
    }


def read(path: Path) -> dict[str, Any]:
    """A run's ``runs.json`` (``path`` the file or its folder); InputError when it is not one."""
    f = path / RUNS if path.is_dir() else path
    try:
        doc = json.loads(f.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{f}: no earlier run there (make eval writes {RUNS} into its output folder)") from None
    except (OSError, ValueError) as e:
        raise InputError(f"{f}: not a run record ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputError(f"{f}: not a run record of this version (format {FORMAT})")
    wsd, retrieval = doc.get("wsd"), doc.get("retrieval")
    ok = (isinstance(wsd, dict) and isinstance(retrieval, dict)
          and all(isinstance(v, dict) and isinstance(v.get("right"), dict) for v in wsd.values())
          and all(isinstance(modes, dict) and all(isinstance(per, dict) for per in modes.values())
                  for modes in retrieval.values()))
    if not ok:
        raise InputError(f"{f}: not a run record (its \"wsd\" or \"retrieval\" part is malformed)")
    return doc


def _when(base: Mapping[str, Any]) -> str:
    commit = base.get("commit")
    return f"the run of {base.get('made', '?')}" + (f" (commit {commit})" if commit else "")


def wsd_lines(name: str, rep: WsdReport, base: Mapping[str, Any]) -> list[str]:
    """The knowledge selector on one WSD set against the same set in ``base``."""
    old = base.get("wsd", {}).get(name)
    if old is None:
        return [f"against {_when(base)}: this set was not in it"]
    c = paired(rep.system.right, {k: float(v) for k, v in old["right"].items()})
    return [f"against {_when(base)}, instance by instance: {rep.system.name} {c.describe()}"]


def retrieval_lines(name: str, rep: RetrievalReport, base: Mapping[str, Any]) -> list[str]:
    """Every mode on one retrieval set against the same mode and set in ``base``."""
    old = base.get("retrieval", {}).get(name)
    if old is None:
        return [f"- against {_when(base)}: this set was not in it"]
    out = []
    for mode, per in rep.per_query.items():
        if mode not in old:
            continue
        parts = [f"{m} " + paired({q: v[m] for q, v in per.items()},
                                  {q: v[m] for q, v in old[mode].items() if m in v}).describe()
                 for m in METRICS]
        out.append(f"- {mode} against {_when(base)}: " + "; ".join(parts))
    return out


__all__ = ["METRICS", "RUNS", "read", "record", "retrieval_lines", "wsd_lines"]
