"""``make eval``: run the WSD and retrieval evaluations on the shared development sets and write
a report.

Writes ``eval/out/wsd.md`` and ``eval/out/retrieval.md`` (Markdown tables) with ``wsd.png`` (F1)
and ``retrieval.png`` (nDCG@10, P@1) bar charts and ``wsd-calibration.png`` (reliability diagram
and risk–coverage curve of the selector's decisions; matplotlib) — ``eval/out/`` is git-ignored.
The store needs the lexicons: those missing are loaded into it first (``--store``, default
``eval-store`` in ``Settings.cache_dir``; OEWN takes a few minutes once).

    python -m kg_rag.eval.report --shared ../shared/data [--store DIR] [--out eval/out]
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kg_rag.errors import InputError
from kg_rag.eval import baseline
from kg_rag.eval.retrieval import RetrievalReport
from kg_rag.eval.wsd import SystemResult, WsdReport
from kg_rag.senses.mode import WsdMode
from kg_rag.store import Store
from kg_rag.text.normalise import for_terminal

if TYPE_CHECKING:
    from kg_rag.eval.significance import Paired

log = logging.getLogger(__name__)

#: retrieval modes compared on every BEIR folder of ``shared/retrieval`` (bm25: the reference row)
RETRIEVAL_MODES: tuple[WsdMode | Literal["bm25"], ...] = (
    WsdMode.NONE, WsdMode.KNOWLEDGE, WsdMode.FIRST_SENSE, "bm25")

#: the lexicons the retrieval sets need: OEWN (English corpora), then the OMW wordnets of the
#: cross-lingual queries, each loaded when the shared folder has it
RETRIEVAL_LEXICONS = ("english-wordnet-2025.xml.gz", "wn30-cntlist.rev", "omw-es-2.0.xml.gz",
                      "omw-fr-2.0.xml.gz")
#: WordNet's corpus tag counts: the knowledge selector's English frequency prior
COUNTS = "wn30-cntlist.rev"
#: Hebrew lemmas from Wiktionary's translations (an OMW tab file; its synsets meet the others
#: through the CILI map beside it): more Hebrew context words reach English glosses
WIKT_HE = "wn-wikt-heb.tab"
#: loaded when the shared folder has them, skipped when it does not
OPTIONAL = (COUNTS, WIKT_HE)

#: (name, corpus stem, language, lexicon files it needs)
DEV_SETS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("semeval2007", "semeval2007", "en", ("english-wordnet-2025.xml.gz", COUNTS)),
    ("semeval2013-dev.es", "semeval2013-dev.es", "es",
     ("english-wordnet-2025.xml.gz", "omw-es-2.0.xml.gz")),
    ("semeval2013-dev.fr", "semeval2013-dev.fr", "fr",
     ("english-wordnet-2025.xml.gz", "omw-fr-2.0.xml.gz")),
)

#: sets whose sense inventory is a dictionary of their own (``lexicon.ttl`` beside the corpus):
#: it is loaded into its own graph (:func:`lexicon_graph`) and is the only source of candidates
#: (``eval wsd --lexicon``), the wordnets serve as knowledge.
#: (name, folder under wsd/, corpus stem, language, wordnet files it needs)
LEXICON_SETS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("hebrew-homographs-dev", "hebrew-homographs-dev", "items", "he",
     ("english-wordnet-2025.xml.gz", "omw-he-2.0.xml.gz", WIKT_HE)),
)


def lexicon_graph(name: str) -> str:
    """The graph of a :data:`LEXICON_SETS` set's dictionary (every set's file is ``lexicon.ttl``,
    so its default graph would be shared)."""
    from kg_rag.namespaces import ID

    return f"{ID}source/{name}-lexicon"


def _row(r: SystemResult) -> str:
    t = r.total
    spi = r.seconds / t.n * 1000 if t.n else 0.0
    return (f"| {r.name} | {t.precision * 100:.1f} | {t.recall * 100:.1f} | {t.f1 * 100:.1f} | "
            f"{t.answered}/{t.n} | {spi:.1f} |")


#: up to this many texts the by-text F1 is a table, beyond it a summary line
TEXT_TABLE = 15


def _by_text(systems: list[SystemResult]) -> list[str]:
    """F1 per ``<text>`` of the corpus (a gain one text carries is not a gain of the method): a
    table for a few texts; for many, how often the system is ahead of the first baseline."""
    texts = [t for t, sc in systems[0].by_text.items() if sc.n]
    if len(texts) < 2:
        return []
    if len(texts) <= TEXT_TABLE:
        out = ["", "| F1 by text | " + " | ".join(f"{t} (n={systems[0].by_text[t].n})" for t in texts) + " |",
               "|---|" + "---:|" * len(texts)]
        for sy in systems:
            cells = [f"{sy.by_text[t].f1 * 100:.1f}" if t in sy.by_text else "-" for t in texts]
            out.append(f"| {sy.name} | " + " | ".join(cells) + " |")
        return out
    if len(systems) < 2:
        return []
    ref = systems[1]
    diffs = sorted(((systems[0].by_text[t].f1 - ref.by_text[t].f1) * 100, t) for t in texts if t in ref.by_text)
    ahead = sum(1 for d, _ in diffs if d > 0)
    level = sum(1 for d, _ in diffs if d == 0)
    worst = ", ".join(f"{t} (n={systems[0].by_text[t].n}) {d:+.1f}" for d, t in diffs[:3] if d < 0)
    mid = diffs[len(diffs) // 2][0]
    return ["", f"F1 by text ({len(diffs)} texts): {systems[0].name} − {ref.name} ahead in {ahead}, "
                f"level in {level}, behind in {len(diffs) - ahead - level}; median {mid:+.1f} points"
                + (f"; most behind: {worst}" if worst else "")]


def wsd_table(report: WsdReport) -> str:
    """The report as Markdown: systems, then F1 by part of speech, then problems."""
    systems = [report.system, *report.baselines.values()]
    lines = [f"WSD on {for_terminal(report.corpus)} (lang {report.lang})", "",
             "| selector | P | R | F1 | answered | ms/instance |", "|---|---:|---:|---:|---:|---:|"]
    lines += [_row(s) for s in systems]
    versus = report.versus()
    if versus:
        lines += ["", f"paired, instance by instance (right = 1, else 0; {report.system.name} − baseline):"]
        lines += [f"- {report.system.name} vs {name}: {c.describe()}" for name, c in versus.items()]
    pos = sorted({p for s in systems for p in s.by_pos})
    if pos:
        counts = {p: s.by_pos[p].n for s in reversed(systems) for p in s.by_pos}
        lines += ["", "| F1 by POS | " + " | ".join(f"{p} (n={counts[p]})" for p in pos) + " |",
                  "|---|" + "---:|" * len(pos)]
        for s in systems:
            cells = [f"{s.by_pos[p].f1 * 100:.1f}" if p in s.by_pos else "-" for p in pos]
            lines.append(f"| {s.name} | " + " | ".join(cells) + " |")
    lines += _by_text(systems)
    if report.system.reliability is not None:
        lines += ["", *report.system.reliability.describe().split("\n")]
    if report.system.calibration is not None:
        lines += ["", report.system.calibration.table()]
    llm = report.describe_llm()
    if llm:
        lines += ["", *llm.split("\n")]
    lines += ["", f"instances without candidates: {report.no_candidates}"]
    lines += [f"- {for_terminal(p)}" for p in report.problems]
    return "\n".join(lines)


def _bars(groups: list[str], series: dict[str, list[float]], ylabel: str, ylim: float, title: str,
          path: Path) -> None:
    """A grouped bar chart: one group per data set, one bar per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(7.0, 1.9 * len(groups) + 1.5), 3.8))
    _grouped(ax, groups, series)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, ylim)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _label(name: str, width: int = 11) -> str:
    """A set name broken at its dashes and spaces into lines of about ``width`` characters, so
    that long names do not run into the next one under a bar chart."""
    lines: list[str] = []
    for word in name.split(" "):
        line = ""
        for part in word.replace("-", "-\0").split("\0"):
            if line and len(line) + len(part) > width:
                lines.append(line)
                line = ""
            line += part
        lines.append(line)
    return "\n".join(lines)


def _grouped(ax: Any, groups: list[str], series: dict[str, list[float]]) -> None:
    width = 0.8 / max(len(series), 1)
    for k, (name, vals) in enumerate(series.items()):
        ax.bar([i + k * width for i in range(len(groups))], vals, width, label=name)
    # a long set name breaks at its dashes and dots instead of running into the next one
    labels = [_label(g) for g in groups]
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(groups))], labels,
                  fontsize=8)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def chart(reports: list[tuple[str, WsdReport]], path: Path) -> None:
    """F1 of the selector and the baselines on each WSD set."""
    systems = [reports[0][1].system.name, *reports[0][1].baselines] if reports else []
    series: dict[str, list[float]] = {}
    for sysname in systems:
        vals = []
        for _, r in reports:
            res = r.system if r.system.name == sysname else r.baselines.get(sysname)
            vals.append(res.total.f1 * 100 if res else 0.0)
        series[sysname] = vals
    _bars([n for n, _ in reports], series, "F1", 100, "kg-rag WSD on the development sets", path)


def calibration_chart(reports: list[tuple[str, WsdReport]], path: Path) -> None:
    """Two panels over the selector's ambiguous decisions on each WSD set: the reliability
    diagram (observed accuracy against mean predicted value per bin; the diagonal is perfect
    calibration) and the risk–coverage curve, each for the normalised probability (solid) and
    the stored confidence field (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rel, rc) = plt.subplots(1, 2, figsize=(10, 4))
    rel.plot([0, 1], [0, 1], color="grey", linewidth=0.8, label="perfect")
    for k, (name, r) in enumerate(reports):
        cal = r.system.calibration
        if cal is None or not len(cal):
            continue
        color = f"C{k}"
        for which, style in (("probability", "-"), ("confidence", "--")):
            s = cal.summary(which)
            bins = [b for b in s["reliability"] if b["n"]]
            rel.plot([b["mean"] for b in bins], [b["accuracy"] for b in bins], style, color=color,
                     marker="o", markersize=3, label=f"{name} {which} (ECE {s['ece']:.3f})")
            curve = s["risk_coverage"]
            rc.plot([c["coverage"] for c in curve], [c["accuracy"] for c in curve], style,
                    color=color, marker="o", markersize=3, label=f"{name} {which}")
    rel.set_xlabel("mean predicted (bin)")
    rel.set_ylabel("observed accuracy")
    rel.set_xlim(0, 1)
    rel.set_ylim(0, 1)
    rel.set_title("reliability (ambiguous instances)")
    rel.legend(loc="upper left", fontsize=6)
    rc.axhline(0.8, color="grey", linewidth=0.8, linestyle=":")
    rc.set_xlabel("coverage: most confident x % of decisions")
    rc.set_ylabel("accuracy")
    rc.set_xlim(0, 100)
    rc.set_ylim(0, 1)
    rc.set_title("risk–coverage")
    rc.legend(loc="lower left", fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def retrieval_chart(reports: list[tuple[str, RetrievalReport]], path: Path) -> None:
    """Two panels: nDCG@10 of every mode on each retrieval set; and each mode's paired difference
    from label matching (``none``) with its 95 % bootstrap interval, on each set, on each
    language slice and on each source document — a bar whose interval crosses 0 is within
    noise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = list(dict.fromkeys(mode for _, r in reports for mode in r.modes))
    rows: list[tuple[str, dict[str, Paired]]] = []
    for name, r in reports:
        rows.append((name, {m: c["ndcg@10"] for m, c in r.vs_none.items() if m != "bm25"}))
        if len(r.by_lang) > 1:
            rows += [(f"{name} {lang}", {m: c["ndcg@10"] for m, c in sl.vs_none.items() if m != "bm25"})
                     for lang, sl in r.by_lang.items()]
        rows += [(f"{name} {doc.rsplit('.', 1)[-1]}",   # semeval2007.d000 → d000
                  {m: c["ndcg@10"] for m, c in sl.vs_none.items() if m != "bm25"})
                 for doc, sl in r.by_document.items()]
    fig, (left, right) = plt.subplots(1, 2, figsize=(6 + 0.7 * len(rows), 4.8),
                                      gridspec_kw={"width_ratios": [1, 0.4 * len(rows)]})
    _grouped(left, [n for n, _ in reports],
             {mode: [r.modes.get(mode, {}).get("ndcg@10", 0.0) for _, r in reports] for mode in modes})
    left.set_ylim(0, 1.0)
    left.set_ylabel("nDCG@10")
    left.set_title("nDCG@10")
    compared = [m for m in modes if m not in ("none", "bm25")]
    width = 0.8 / max(len(compared), 1)
    for k, mode in enumerate(compared):
        xs = [i + k * width for i in range(len(rows))]
        cs = [cmp.get(mode) for _, cmp in rows]
        ds = [c.delta if c else 0.0 for c in cs]
        err = [[c.delta - c.low if c else 0.0 for c in cs], [c.high - c.delta if c else 0.0 for c in cs]]
        right.bar(xs, ds, width, yerr=err, capsize=3, label=f"{mode} − none", color=f"C{modes.index(mode)}")
    right.axhline(0.0, color="black", linewidth=0.8)
    right.set_xticks([i + width * (len(compared) - 1) / 2 for i in range(len(rows))],
                     [_label(n) for n, _ in rows], fontsize=7)
    right.set_ylabel("Δ nDCG@10 vs none (95 % CI)")
    right.set_title("paired difference from label matching")
    right.legend(fontsize=8, frameon=False, loc="best")
    fig.suptitle("kg-rag retrieval on the development sets")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _ensure_loaded(store: Store, wordnet: Path, files: tuple[str, ...]) -> None:
    from loaders import list_sources, load_file, stale
    from loaders.iris import source_graph_iri

    have = {r.graph: r for r in list_sources(store)}
    for f in files:
        if f in OPTIONAL and not (wordnet / f).is_file():
            continue  # without the counts the English prior is WordNet's sense order
        rec = have.get(source_graph_iri(wordnet / f))
        if rec is None:
            print(f"loading {f} into the evaluation store (once)", file=sys.stderr)
            load_file(store, wordnet / f)
        elif stale(rec):
            print(f"reloading {f}: loaded by an older mapping (version {rec.mapping})", file=sys.stderr)
            load_file(store, wordnet / f)


def _ensure_lexicon(store: Store, path: Path, graph: str) -> None:
    """Load a set's own dictionary into ``graph`` unless it is there (and not stale)."""
    from loaders import list_sources, load_file, stale

    rec = {r.graph: r for r in list_sources(store)}.get(graph)
    if rec is None or stale(rec):
        print(f"loading {path} into the evaluation store as {graph}", file=sys.stderr)
        load_file(store, path, graph=graph)


def _retrieval(store: Store, shared: Path) -> list[tuple[str, RetrievalReport]]:
    """Every BEIR folder under ``shared/retrieval`` with label matching, the selectors and BM25
    (OEWN for the English sets, OMW Spanish and French for the cross-lingual queries)."""
    from kg_rag.api import KnowledgeGraph
    from kg_rag.eval.retrieval import evaluate_retrieval

    folders = sorted(p.parent for p in (shared / "retrieval").glob("*/corpus.jsonl"))
    out = []
    if folders:
        wn = shared / "wordnet"
        _ensure_loaded(store, wn, RETRIEVAL_LEXICONS[:1] + tuple(
            f for f in RETRIEVAL_LEXICONS[1:] if (wn / f).is_file()))
    for folder in folders:
        rep = evaluate_retrieval(KnowledgeGraph(store), folder, RETRIEVAL_MODES)
        out.append((folder.name, rep))
        print(f"retrieval on {folder.name}\n{rep.table()}\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m kg_rag.eval.report", description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default="../shared/data", help="the shared data folder")
    from kg_rag.settings import settings

    ap.add_argument("--store", default=str(Path(settings().cache_dir) / "eval-store"))
    ap.add_argument("--out", default="eval/out")
    ap.add_argument("--baseline", metavar="RUNS.json|DIR|none",
                    help="an earlier run to compare with, set by set (its runs.json, or the folder "
                         "holding it); default: the previous run in --out, when there is one")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from kg_rag.errors import KgRagError
    from kg_rag.eval.wsd import evaluate
    from kg_rag.senses.knowledge.selector import KnowledgeSelector
    from kg_rag.store import EmbeddedStore

    shared = Path(args.shared)
    wsd_dir = shared / "wsd"
    if not wsd_dir.is_dir():
        print(f"no WSD data in {wsd_dir}: pass --shared", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reports: list[tuple[str, WsdReport]] = []
    tables: dict[str, str] = {}
    try:
        earlier = _baseline(args.baseline, out)
        with EmbeddedStore(args.store) as store:
            present = [d for d in DEV_SETS if (wsd_dir / f"{d[1]}.data.xml").is_file()]
            # every lexicon first: the selector's concept graph is built once, from the store
            # as it is when it first decides (else a first run scores es/fr without their OMW)
            own = [d for d in LEXICON_SETS if (wsd_dir / d[1] / f"{d[2]}.data.xml").is_file()
                   and all((shared / "wordnet" / f).is_file() for f in d[4] if f not in OPTIONAL)]
            for *_, files in present:
                _ensure_loaded(store, shared / "wordnet", files)
            for name, folder, _, _, files in own:
                _ensure_loaded(store, shared / "wordnet", files)
                _ensure_lexicon(store, wsd_dir / folder / "lexicon.ttl", lexicon_graph(name))
            selector = KnowledgeSelector(store)
            runs: list[tuple[str, Path, str, str | None]] = [
                (name, wsd_dir / stem, lang, None) for name, stem, lang, _ in present]
            runs += [(name, wsd_dir / folder / stem, lang, lexicon_graph(name))
                     for name, folder, stem, lang, _ in own]
            for name, base, lang, lexicon in runs:
                data = base.parent / f"{base.name}.data.xml"
                gold = base.parent / f"{base.name}.gold.key.txt"
                rep = evaluate(store, selector, data, gold, lang=lang, lexicon=lexicon)
                reports.append((name, rep))
                tables[name] = wsd_table(rep)   # once: its paired comparisons resample
                print(tables[name] + "\n")
            retrieval = _retrieval(store, shared)
    except KgRagError as e:
        print(f"eval: error: {e}", file=sys.stderr)
        return e.exit_code

    def wsd_section(name: str, rep: WsdReport) -> str:
        return tables[name] + ("\n" + "\n".join(baseline.wsd_lines(name, rep, earlier)) if earlier else "")

    md = "# kg-rag evaluation: word sense disambiguation\n\n" + "\n\n".join(
        wsd_section(n, r) for n, r in reports) + "\n"
    (out / "wsd.md").write_text(md, encoding="utf-8")
    written = [out / "wsd.md"]
    if reports:
        chart(reports, out / "wsd.png")
        calibration_chart(reports, out / "wsd-calibration.png")
        written += [out / "wsd.png", out / "wsd-calibration.png"]
    if retrieval:
        md = "# kg-rag evaluation: retrieval\n\n" + "\n\n".join(
            f"## {name}\n\n{rep.table()}"
            + ("\n\n" + "\n".join(baseline.retrieval_lines(name, rep, earlier)) if earlier else "")
            for name, rep in retrieval) + "\n"
        (out / "retrieval.md").write_text(md, encoding="utf-8")
        retrieval_chart(retrieval, out / "retrieval.png")
        written += [out / "retrieval.md", out / "retrieval.png"]
    record = out / baseline.RUNS
    record.write_text(json.dumps(baseline.record(reports, retrieval, _commit()), ensure_ascii=False),
                      encoding="utf-8")
    written.append(record)
    print("wrote " + ", ".join(str(p) for p in written)
          + (f" (compared with the run of {earlier.get('made', '?')})" if earlier else ""), file=sys.stderr)
    return 0


def _baseline(arg: str | None, out: Path) -> dict[str, Any] | None:
    """The earlier run to compare with: ``--baseline`` (``none``: no comparison), else the
    previous run's ``runs.json`` in ``out`` when there is one."""
    if arg is not None and arg.lower() == "none":
        return None
    if arg is not None:
        return baseline.read(Path(arg))
    previous = out / baseline.RUNS
    if not previous.is_file():
        return None
    try:
        return baseline.read(previous)
    except InputError as e:   # an older format: nothing to compare with
        log.warning("%s", e)
        return None


def _commit() -> str | None:
    """The source tree's commit, when it is a git checkout (for the run record)."""
    try:
        r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=5, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() or None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
