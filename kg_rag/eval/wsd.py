"""``kg-rag eval wsd``: word sense disambiguation scored against Raganato-format gold keys.

Candidates of an instance are the senses of its lemma (filtered by part of speech) in the lexicon
of the evaluation language, in sense-rank order. The context of an instance is its sentence and
the neighbouring sentences of the same text; the other instances of that context are the
selector's ``others``. An answer is correct when the chosen sense's WordNet sense key, its
``dct:identifier`` or its concept's ILI id is one of the gold keys (English sense keys and
cross-lingual ILI keys both work). Precision is over answered instances, recall over all
instances with a gold key, F1 their harmonic mean (Raganato et al. 2017).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyoxigraph import NamedNode

from kg_rag.errors import InputError
from kg_rag.eval.calibration import Calibration, by_threshold
from kg_rag.eval.corpus import POS_MAP, Corpus, Token, read_corpus, read_keys, write_keys
from kg_rag.eval.llm_use import THRESHOLDS, LlmStats, Tradeoff, pct
from kg_rag.model import Candidate, Mention, Selection, SelectionRequest
from kg_rag.namespaces import ILI
from kg_rag.store import Store, Values

if TYPE_CHECKING:
    from kg_rag.eval.significance import Paired
    from kg_rag.senses.selective import Pair

log = logging.getLogger(__name__)

CandidateLookup = Callable[[str, str, "str | None"], tuple[Candidate, ...]]


@dataclass(slots=True)
class Score:
    n: int = 0
    answered: int = 0
    correct: int = 0

    @property
    def precision(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.n if self.n else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "f1": round(self.f1, 4), "n": self.n, "answered": self.answered,
                "correct": self.correct}


#: the reliability table splits decisions at this confidence ("confident" / "unsure")
CONFIDENT = 0.5
#: confidence buckets of the reliability table: [0, 0.1), [0.1, 0.2), … [0.9, 1.0]
BUCKETS = 10


@dataclass(slots=True)
class Reliability:
    """How often the selector is right at each confidence, over the ambiguous instances it
    answered (two candidates or more) — what a stored confidence means on this data, and how
    often a decision with confidence ≥ ``CONFIDENT`` is right."""

    threshold: float
    buckets: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)] * BUCKETS)  # (n, correct)
    confident: tuple[int, int] = (0, 0)   # (n, correct) at confidence >= threshold
    unsure: tuple[int, int] = (0, 0)

    def add(self, confidence: float, ok: bool) -> None:
        i = min(BUCKETS - 1, max(0, int(confidence * BUCKETS)))
        n, c = self.buckets[i]
        self.buckets[i] = (n + 1, c + ok)
        if confidence >= self.threshold:
            self.confident = (self.confident[0] + 1, self.confident[1] + ok)
        else:
            self.unsure = (self.unsure[0] + 1, self.unsure[1] + ok)

    def split(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(n, correct) of the confident decisions and of the unsure ones."""
        return self.confident, self.unsure

    def as_dict(self) -> dict[str, Any]:
        (cn, cc), (un, uc) = self.split()
        return {"threshold": self.threshold,
                "confident": {"n": cn, "correct": cc}, "unsure": {"n": un, "correct": uc},
                "buckets": [{"from": i / BUCKETS, "to": (i + 1) / BUCKETS, "n": n, "correct": c}
                            for i, (n, c) in enumerate(self.buckets)]}

    def describe(self) -> str:
        (cn, cc), (un, uc) = self.split()

        def pct(c: int, n: int) -> str:
            return f"{100 * c / n:.1f} % right" if n else "none"
        cells = " · ".join(f"{i / BUCKETS:.1f}: {c}/{n}" for i, (n, c) in enumerate(self.buckets) if n)
        return (f"confident decisions (confidence ≥ {self.threshold:g}): "
                f"{cn}, {pct(cc, cn)}; unsure: {un}, {pct(uc, un)}\n"
                f"right by confidence (ambiguous instances): {cells}")


@dataclass(frozen=True, slots=True)
class Item:
    """One scored instance: what was chosen, whether it is right, and who decided it."""

    instance: str
    gold: tuple[str, ...]
    chosen: str | None            # the answer key (sense key, ILI id, identifier), None: unanswered
    right: bool
    candidates: int
    selection: Selection | None   # None: no candidates
    asked_llm: bool = False       # knowledge+llm: sent to the LLM
    knowledge_probability: float | None = None  # knowledge+llm: the knowledge decision's
    knowledge_right: bool | None = None          # knowledge+llm: was the knowledge decision right


@dataclass(slots=True)
class SystemResult:
    name: str
    total: Score = field(default_factory=Score)
    by_pos: dict[str, Score] = field(default_factory=dict)
    #: the corpus' ``<text>`` ids → the same counts over that text's instances
    by_text: dict[str, Score] = field(default_factory=dict)
    seconds: float = 0.0
    answers: dict[str, str] = field(default_factory=dict)   # instance id → predicted key
    #: every scored instance → 1.0 when answered right, else 0.0 (unanswered too): the paired
    #: comparisons of :meth:`WsdReport.versus`
    right: dict[str, float] = field(default_factory=dict)
    reliability: Reliability | None = None
    calibration: Calibration | None = None
    #: every scored instance, in corpus order (the system only: run records)
    items: list[Item] = field(default_factory=list)
    #: knowledge+llm: the knowledge selector's own decisions (the threshold trade-off)
    knowledge: Calibration | None = None

    def as_dict(self) -> dict[str, Any]:
        d = self.total.as_dict()
        d["by_pos"] = {p: s.as_dict() for p, s in sorted(self.by_pos.items())}
        d["by_text"] = {t: s.as_dict() for t, s in self.by_text.items()}
        d["seconds_per_instance"] = round(self.seconds / self.total.n, 5) if self.total.n else 0.0
        if self.reliability is not None:
            d["reliability"] = self.reliability.as_dict()
        if self.calibration is not None:
            d["calibration"] = self.calibration.as_dict()
        return d


@dataclass(slots=True)
class WsdReport:
    corpus: str
    lang: str
    system: SystemResult
    baselines: dict[str, SystemResult]
    no_candidates: int
    problems: list[str]
    llm: LlmStats | None = None
    #: the knowledge+llm threshold in use (the selector's, else the setting)
    threshold: float | None = None

    def tradeoff(self) -> list[Tradeoff]:
        """The knowledge selector's decisions split at each of :data:`THRESHOLDS` (and the one
        in use): how many would go to the LLM, how often the knowledge selector is right on the
        rest. Empty unless the system is the knowledge selector or knowledge+llm."""
        s = self.system
        cal = s.knowledge if s.knowledge is not None else (
            s.calibration if s.name == "knowledge" else None)
        if cal is None or not len(cal):
            return []
        ts = sorted(set(THRESHOLDS) | ({self.threshold} if self.threshold is not None else set()))
        return [Tradeoff(t, *by_threshold(cal.probability, cal.right, t)) for t in ts]

    def describe_llm(self) -> str:
        """Lines for the text report: the LLM's cost, the threshold trade-off in words, and
        for knowledge+llm how the LLM did on the mentions it was sent."""
        lines = []
        if self.llm is not None:
            lines.append(self.llm.describe())
        asked = [i for i in self.system.items if i.asked_llm]
        if self.system.knowledge is not None and asked:
            right = sum(i.right for i in asked)
            k_right = sum(bool(i.knowledge_right) for i in asked)
            lines.append(f"sent to the LLM: {len(asked)}; right afterwards {right} "
                         f"({pct(right, len(asked))}), the knowledge selector had "
                         f"{k_right} of them right ({pct(k_right, len(asked))})")
        rows = self.tradeoff()
        if rows:
            n = rows[0].decisions
            lines.append(f"knowledge+llm threshold (from the knowledge selector's own {n} "
                         "ambiguous decisions; KG_RAG_LLM_THRESHOLD):")
            lines += [f"- {r.describe()}" + (" ← in use" if r.threshold == self.threshold else "")
                      for r in rows]
        return "\n".join(lines)

    def versus(self) -> dict[str, Paired]:
        """The system against each baseline, instance by instance (right = 1, else 0): the
        difference of accuracy over the scored instances (= the F1 difference when every
        instance is answered), its paired-bootstrap 95 % interval, the instances only one of
        them gets right, and the paired randomization test (an exact McNemar test in effect).
        Instances of one text are not independent, so the interval is, if anything, too narrow."""
        from kg_rag.eval.significance import paired

        return {name: paired(self.system.right, base.right) for name, base in self.baselines.items()}

    def as_dict(self) -> dict[str, Any]:
        d = self.system.as_dict()
        d.update({
            "system": self.system.name, "corpus": self.corpus, "lang": self.lang,
            "no_candidates": self.no_candidates, "problems": self.problems,
            "baselines": {k: v.as_dict() for k, v in self.baselines.items()},
            "versus": {k: v.as_dict() for k, v in self.versus().items()},
        })
        if self.llm is not None:
            d["llm"] = self.llm.as_dict()
        rows = self.tradeoff()
        if rows:
            d["threshold"] = self.threshold
            d["tradeoff"] = [r.as_dict() for r in rows]
        return d


# --- candidates ----------------------------------------------------------------------------------

class Candidates:
    """Candidates of an instance: the senses of its lemma in the evaluation language's lexicons
    (``LexiconAnnotator.candidates_for_lemma``), filtered by the corpus' part of speech; cached.
    ``graph``: only the senses of the source loaded into that named graph (``--lexicon``); the
    rest of the store still serves the selector as knowledge."""

    def __init__(self, store: Store, graph: str | None = None) -> None:
        from kg_rag.annotate import LexiconAnnotator

        self.annotator = LexiconAnnotator(store)
        self.graph = graph
        self.problems: list[str] = []
        self._cache: dict[tuple[str, str, str | None], tuple[Candidate, ...]] = {}

    def __call__(self, lemma: str, lang: str, pos: str | None) -> tuple[Candidate, ...]:
        k = (lemma, lang, pos)
        hit = self._cache.get(k)
        if hit is None:
            wanted = POS_MAP.get(pos or "")
            try:
                found = self.annotator.candidates_for_lemma(lemma.replace("_", " "), lang,
                                                            wanted[0] if wanted else None, self.graph)
            except InputError as e:  # an empty or odd lemma: no candidates, reported
                self.problems.append(f"lemma {lemma!r}: {e}")
                found = ()
            hit = self._cache[k] = tuple(sorted(found, key=lambda c: (c.rank or 10**6, c.sense or "")))
        return hit


class SenseKeys:
    """The keys a gold file may use for a sense: WordNet sense key, ``dct:identifier``, ILI id."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.identifiers: dict[str, set[str]] = {}   # sense IRI → gold-comparable keys

    def keys_of(self, cand: Candidate) -> set[str]:
        keys = {x for x in (cand.sense_key, cand.ili) if x}
        if cand.ili is None and cand.concept.startswith(str(ILI)):
            keys.add(cand.concept[len(str(ILI)):])
        if cand.sense:
            keys |= self.identifiers.get(cand.sense, set())
        return keys

    def answer_key(self, cand: Candidate) -> str:
        """The key written for a chosen candidate: its sense key, ILI id or (first)
        ``dct:identifier``, else its IRI."""
        ids = sorted(self.identifiers.get(cand.sense, ())) if cand.sense else []
        return cand.sense_key or cand.ili or (ids[0] if ids else cand.id)

    def load_identifiers(self, senses: Sequence[str]) -> None:
        """The dct:identifier of each sense (batched queries of 400)."""
        todo = [s for s in dict.fromkeys(senses) if s not in self.identifiers]
        for i in range(0, len(todo), 400):
            chunk = todo[i : i + 400]
            for s in chunk:
                self.identifiers.setdefault(s, set())
            rows = self.store.select("select-sense-identifiers",
                                     values=Values.column("sense", [NamedNode(s) for s in chunk]))
            for r in rows:
                self.identifiers[r["sense"].value].add(r["ident"].value)


# --- requests ------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Item:
    token: Token
    request: SelectionRequest


def _requests(corpus: Corpus, lang: str, lookup: CandidateLookup, window: int,
              evidence: Callable[[Sequence[Candidate]], tuple[Any, ...]]) -> list[list[_Item]]:
    """One list of requests per text (all instances, with or without candidates)."""
    batches = []
    for text in corpus.texts:
        # character offsets of every token in its sentence string
        sent_strings: list[str] = []
        offsets: list[list[int]] = []
        for s in text.sentences:
            pos, offs = 0, []
            for t in s.tokens:
                offs.append(pos)
                pos += len(t.surface) + 1
            offsets.append(offs)
            sent_strings.append(" ".join(t.surface for t in s.tokens))
        mentions: dict[str, Mention] = {}
        for si, s in enumerate(text.sentences):
            for ti, t in enumerate(s.tokens):
                if t.instance:
                    cands = lookup(t.lemma, lang, t.pos or None)
                    start = offsets[si][ti]
                    mentions[t.instance] = Mention(start, start + len(t.surface), t.surface, lang, cands)
        all_cands = [c for m in mentions.values() for c in m.candidates]
        ev = {e.candidate: e for e in evidence(all_cands)} if all_cands else {}
        items = []
        for si, s in enumerate(text.sentences):
            lo, hi = max(0, si - window), min(len(text.sentences), si + window + 1)
            shift = sum(len(x) + 1 for x in sent_strings[lo:si])
            context = " ".join(sent_strings[lo:hi])
            ctx_ids = [t.instance for x in text.sentences[lo:hi] for t in x.tokens if t.instance]
            for t in s.tokens:
                if not t.instance:
                    continue
                m = mentions[t.instance]
                m = Mention(m.start + shift, m.end + shift, m.text, lang, m.candidates)
                others = tuple(mentions[i] for i in ctx_ids if i != t.instance)
                items.append(_Item(t, SelectionRequest(
                    mention=m, context=context, context_lang=lang,
                    evidence=tuple(ev[c] for c in m.candidates), others=others)))
        batches.append(items)
    return batches


# --- scoring -------------------------------------------------------------------------------------
def _run(name: str, select: Callable[[Sequence[SelectionRequest]], list[Selection]],
         batches: list[list[_Item]], gold: dict[str, tuple[str, ...]], senses: SenseKeys,
         progress: Callable[[int], None] | None = None, threshold: float | None = None,
         pairs: Callable[[Sequence[SelectionRequest]], list[Pair]] | None = None,
         texts: Sequence[str] = ()) -> SystemResult:
    """Score one selector; with ``threshold``, also how often it is right at each confidence and
    how well calibrated its decisions are (:mod:`kg_rag.eval.calibration`), and every item.
    ``pairs`` (knowledge+llm's :meth:`~kg_rag.senses.selective.SelectiveSelector.select_pairs`)
    replaces ``select`` and also scores the knowledge selector's own decisions. ``texts``: the
    ``<text>`` id of each batch (:attr:`SystemResult.by_text`)."""
    from kg_rag.senses.selective import probability

    system = threshold is not None
    res = SystemResult(name, reliability=Reliability(threshold) if threshold is not None else None,
                       calibration=Calibration() if system else None,
                       knowledge=Calibration() if pairs is not None else None)
    for b, items in enumerate(batches):
        in_text = res.by_text.setdefault(texts[b], Score()) if b < len(texts) else Score()
        todo = [it for it in items if it.request.mention.candidates and it.token.instance in gold]
        t0 = time.perf_counter()
        both = pairs([it.request for it in todo]) if pairs is not None and todo else None
        if both is not None:
            selections = [p.final for p in both]
        else:
            selections = select([it.request for it in todo]) if todo else []
        res.seconds += time.perf_counter() - t0
        chosen = {it.token.instance: sel for it, sel in zip(todo, selections, strict=True)}
        first = {it.token.instance: p for it, p in zip(todo, both or [], strict=False)}
        for it in items:
            iid = it.token.instance
            if iid is None or iid not in gold:
                continue
            pos = it.token.pos or "?"
            bucket = res.by_pos.setdefault(pos, Score())
            for s in (res.total, bucket, in_text):
                s.n += 1
            sel = chosen.get(iid)
            cands = it.request.mention.candidates
            gold_keys = set(gold[iid])
            pair = first.get(iid)
            if pair is not None and res.knowledge is not None and len(cands) > 1 \
                    and pair.knowledge.chosen is not None:
                k = pair.knowledge
                assert k.chosen is not None
                res.knowledge.add(k.scores, [c.id for c in cands],
                                  [bool(senses.keys_of(c) & gold_keys) for c in cands],
                                  k.chosen.id, k.confidence, bool(senses.keys_of(k.chosen) & gold_keys))
            extra: dict[str, Any] = {}
            if pair is not None:
                k = pair.knowledge
                extra = {"asked_llm": pair.asked, "knowledge_probability": probability(k),
                         "knowledge_right": k.chosen is not None
                         and bool(senses.keys_of(k.chosen) & gold_keys)}
            res.right[iid] = 0.0
            if sel is None or sel.chosen is None:
                if system:
                    res.items.append(Item(iid, gold[iid], None, False, len(cands), sel, **extra))
                continue
            keys = senses.keys_of(sel.chosen)
            ok = bool(keys & gold_keys)
            if system:
                res.items.append(Item(iid, gold[iid], senses.answer_key(sel.chosen), ok, len(cands),
                                      sel, **extra))
            res.right[iid] = float(ok)
            for s in (res.total, bucket, in_text):
                s.answered += 1
                s.correct += ok
            if res.reliability is not None and len(it.request.mention.candidates) > 1:
                res.reliability.add(sel.confidence, ok)
            if res.calibration is not None and len(it.request.mention.candidates) > 1:
                res.calibration.add(sel.scores, [c.id for c in cands],
                                    [bool(senses.keys_of(c) & gold_keys) for c in cands],
                                    sel.chosen.id, sel.confidence, ok)
            res.answers[iid] = senses.answer_key(sel.chosen)
        if progress:
            progress(len(items))
    return res


def evaluate(store: Store, selector: Any, data: str | Path, gold_path: str | Path,
             lang: str | None = None, window: int = 1, predictions: str | Path | None = None,
             lookup: CandidateLookup | None = None,
             progress: Callable[[int], None] | None = None, any_pos: bool = False,
             lexicon: str | None = None, threshold: float | None = None) -> WsdReport:
    """Run ``selector`` (and the first-sense and random baselines) on a corpus; never raises for
    one bad instance: problems are counted and listed in the report. ``any_pos``: candidates of
    the lemma in every part of speech, as the annotator gives them for raw text (the corpus' POS
    still groups the scores). ``lexicon``: candidates only from this loaded source (graph IRI or
    file name, :func:`loaders.catalog.resolve_source`; InputError when unknown). ``threshold``:
    the knowledge+llm threshold to mark in the trade-off (a knowledge+llm selector's own wins).
    An LLM selector's requests and tokens are counted (``report.llm``)."""
    from kg_rag.pipeline.evidence import fetch_evidence
    from kg_rag.senses.baselines import FirstSenseSelector, RandomSelector

    graph = None
    if lexicon is not None:
        from loaders.catalog import resolve_source

        if lookup is not None:
            raise InputError("give either a candidate lookup or a lexicon, not both")
        graph = resolve_source(store, lexicon).graph
    corpus = read_corpus(data)
    gold = read_keys(gold_path)
    problems = list(corpus.problems)
    if graph is not None:
        problems.append(f"candidates only from the source {graph} (--lexicon); the whole store "
                        f"serves as knowledge")
    eval_lang = (lang or corpus.lang or "").lower()
    if not eval_lang:
        eval_lang = "en"
        problems.append("the corpus has no lang attribute and no --lang was given: assumed en")
    find = lookup or Candidates(store, graph)
    by_pos: CandidateLookup = (lambda lemma, lg, pos: find(lemma, lg, None)) if any_pos else find
    batches = _requests(corpus, eval_lang, by_pos, window, lambda c: fetch_evidence(store, c))
    if any_pos:
        problems.append("candidates of every part of speech (--any-pos: as raw text is annotated)")
    if isinstance(find, Candidates):
        problems.extend(find.problems)
    senses = SenseKeys(store)
    senses.load_identifiers([c.sense for b in batches for it in b
                             for c in it.request.mention.candidates if c.sense])
    ids = {t.instance for t in corpus.instances}
    unknown = [k for k in gold if k not in ids]
    if unknown:
        problems.append(f"{len(unknown)} gold key(s) name instances not in the corpus "
                        f"(e.g. {unknown[0]}); they are not scored")
    no_gold = sorted(i for i in ids if i is not None and i not in gold)
    if no_gold:
        problems.append(f"{len(no_gold)} instance(s) have no gold key (e.g. {no_gold[0]}); "
                        f"they are not scored")
    empty = sorted({(it.token.lemma, it.token.pos) for b in batches for it in b
                    if not it.request.mention.candidates and it.token.instance in gold})
    no_cands = sum(1 for b in batches for it in b
                   if not it.request.mention.candidates and it.token.instance in gold)
    if no_cands:
        ex = ", ".join(f"{lem}/{p}" for lem, p in empty[:5])
        where = f"source {graph}" if graph is not None else f"{eval_lang} lexicon"
        problems.append(f"{no_cands} instance(s) have no senses in the {where} "
                        f"(e.g. {ex}): counted as unanswered")
    warm_up = getattr(selector, "warm_up", None)
    if callable(warm_up):  # load graphs and indexes outside the timed part
        warm_up()
    usage = _usage(selector)
    before = (usage.requests, usage.tokens_in, usage.tokens_out) if usage is not None else None
    pairs = getattr(selector, "select_pairs", None)
    texts = [t.id for t in corpus.texts]   # _requests makes one batch per text
    system = _run(selector.agent.name, selector.select, batches, gold, senses, progress,
                  threshold=CONFIDENT, pairs=pairs if callable(pairs) else None, texts=texts)
    llm = None
    usage = _usage(selector)
    if usage is not None and before is not None:
        sent = sum(1 for i in system.items if i.asked_llm or (
            i.selection is not None and i.selection.llm is not None))
        llm = LlmStats(usage.requests - before[0], usage.tokens_in - before[1],
                       usage.tokens_out - before[2], system.total.n, sent)
    threshold = getattr(selector, "threshold", threshold)
    baselines = {}
    for base in (FirstSenseSelector(), RandomSelector(seed=0)):
        if base.agent.name != system.name:
            baselines[base.agent.name] = _run(base.agent.name, base.select, batches, gold, senses,
                                              texts=texts)
    if predictions:
        write_keys(predictions, system.answers)
    return WsdReport(corpus=corpus.source, lang=eval_lang, system=system, baselines=baselines,
                     no_candidates=no_cands, problems=problems, llm=llm, threshold=threshold)


def _usage(selector: Any) -> Any:
    """The request and token counter of the LLM selector in ``selector`` (itself, knowledge+llm's
    or llm,knowledge's primary), or None."""
    for part in (selector, getattr(selector, "llm", None), getattr(selector, "primary", None)):
        usage = getattr(part, "usage", None)
        if usage is not None and hasattr(usage, "requests"):
            return usage
    return None
