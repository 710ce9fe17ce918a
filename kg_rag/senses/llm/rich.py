"""The rich prompt (template ``wsd-rich-v1``, ``KG_RAG_LLM_PROMPT=wsd-rich-v1``): the dictionary
entry as the paper put it before the model, bounded.

Per mention: the sentence of the mention with up to two sentences before it and one after
(:data:`CONTEXT_BUDGET` estimated tokens, the mention marked ⟦like this⟧ at its offsets). Per
candidate sense, in the order the lexicon lists them and within :data:`MENTION_BUDGET` for the
whole mention (at least :data:`MIN_SENSE_BUDGET` a sense): its part of speech and register/usage
labels ("literary", "rare", "Talmudic") in brackets, its definitions (the documents' language
or English first, then the context's language), up to two usage examples, translation
equivalents and labels of its concept in other languages (a few synonyms), the concept's
broader concepts (``under``) and its thesaurus (``in``), and usage notes. The first definition
is always there (cut to fit); the rest is added, cheapest and most telling first, while it fits.

The template :data:`~.prompt.TEMPLATE` (``wsd-v1``) stays the compact one: about half the
tokens. Both answer in the same JSON with the same ids (:mod:`.validate`); the template's name
is the selector's version, so decisions made with one are never reused as the other's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kg_rag.model import SelectionRequest, SenseEvidence
from kg_rag.senses.llm.prompt import (
    Line,
    _grouped,
    _pick,
    clean,
    estimate_tokens,
    mention_head,
    quote,
    sense_parts,
    truncate,
)
from kg_rag.text.normalise import base_language

MENTION_BUDGET = 900        # estimated tokens per mention block
CONTEXT_BUDGET = 220        # estimated tokens of context (sentences around the mention)
MIN_SENSE_BUDGET = 40       # a sense line always gets at least this much
BEFORE, AFTER = 2, 1        # sentences of context before and after the mention's own

#: where a sentence ends: . ! ? … (and the Hebrew sof pasuq ׃) before a space, or a line break
_END = re.compile(r"(?<=[.!?…׃])\s+|\s*\n\s*")
_MARK_OPEN, _MARK_CLOSE = "⟦", "⟧"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, in order, covering it without the gaps."""
    spans, at = [], 0
    for m in _END.finditer(text):
        if m.start() > at:
            spans.append((at, m.start()))
        at = m.end()
    if at < len(text):
        spans.append((at, len(text)))
    return spans or [(0, len(text))]


def context(req: SelectionRequest, budget: int = CONTEXT_BUDGET) -> str:
    """The mention's sentence with up to :data:`BEFORE` sentences before and :data:`AFTER`
    after, the mention marked at its offsets, within ``budget`` tokens: sentences are dropped
    from the far ends first (the earliest before, then the one after), and a sentence alone
    that is still too long becomes a window around the mention."""
    text, m = req.context, req.mention
    start, end = m.start, m.end
    if not (0 <= start < end <= len(text) and text[start:end] == m.text):
        at = text.find(m.text) if m.text else -1
        if at < 0 or text.find(m.text, at + 1) >= 0:   # not found, or not where: say no more
            return truncate(clean(text), budget)
        start, end = at, at + len(m.text)
    spans = sentence_spans(text)
    k = next((i for i, (s, e) in enumerate(spans) if s <= start < max(e, s + 1)), 0)
    lo, hi = max(0, k - BEFORE), min(len(spans), k + AFTER + 1)
    while True:
        s, e = spans[lo][0], spans[hi - 1][1]
        piece = (text[s:start] + _MARK_OPEN + text[start:end] + _MARK_CLOSE + text[end:e])
        shown = ("…" if s > 0 else "") + clean(piece) + ("…" if e < len(text.rstrip()) else "")
        if estimate_tokens(quote(shown)) <= budget:
            return shown
        if lo < k:
            lo += 1
        elif hi > k + 1:
            hi -= 1
        else:
            return _window(clean(piece), budget)


def _window(text: str, budget: int) -> str:
    """The widest window around the marked mention of ``text`` that fits ``budget``."""
    centre = max(text.find(_MARK_OPEN), 0)
    close = text.find(_MARK_CLOSE, centre)
    width = (close - centre + 1) if close >= 0 else 1
    best, half = "", 10
    while True:
        lo, hi = max(0, centre - half), min(len(text), centre + width + half)
        window = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
        if estimate_tokens(quote(window)) > budget:
            return best or truncate(text[centre:], budget)
        best = window
        if lo == 0 and hi == len(text):
            return best
        half += 10


def sense_line(sid: str, ev: SenseEvidence, ctx_lang: str, target_lang: str, show_pos: bool,
               budget: int) -> str:
    """One sense, everything the dictionary and thesaurus say of it that fits ``budget``."""
    sp = sense_parts(sid, ev, ctx_lang, target_lang, show_pos, max(budget // 4, 6))
    defs, examples, labels = sp.definitions, sp.examples, sp.labels
    under = _grouped(_pick(ev.broader, sp.gloss_langs), "under", set())
    scheme = _pick(ev.schemes, sp.gloss_langs)[:1]
    line = Line(sp.head, budget)
    if defs:  # one definition always, cut to what is left after a translation's room
        prefix = f"def@{defs[0].lang or 'und'} "
        line.add_cut(prefix, defs[0].text, max(line.left(prefix) - (8 if sp.translations else 0), 6))
    elif labels:
        line.add(labels[0])
        labels = labels[1:]
    for part in sp.translations[:1]:
        line.add(part)
    for ex in examples[:1]:
        line.add(f"ex@{ex.lang or 'und'} {quote(ex.text)}")
    for part in under[:1]:
        line.add(part)
    for d in [d for d in defs[1:] if d.lang != defs[0].lang][:1]:
        line.add(f"def@{d.lang or 'und'} {quote(d.text)}")
    for ex in examples[1:2]:
        line.add(f"ex@{ex.lang or 'und'} {quote(ex.text)}")
    for s in scheme:
        line.add(f"in {quote(s.text)}")
    for part in sp.translations[1:4] + labels[:3] + sp.notes[:2]:
        line.add(part)
    return line.text()


def mention_block(mid: str, req: SelectionRequest, ids: Sequence[tuple[str, str]],
                  same_context_as: str | None, lang_suffix: str) -> str:
    """The data block of one mention: head, context and a line per sense (see the module)."""
    m = req.mention
    head = mention_head(mid, req, lang_suffix, 24)
    ctx_line = (f"context: same as {same_context_as}" if same_context_as
                else f"context: {quote(context(req))}")
    fixed = estimate_tokens(head) + estimate_tokens(ctx_line) + 2
    evidence = {ev.candidate.id: ev for ev in req.evidence}
    per_sense = max((MENTION_BUDGET - fixed) // max(len(ids), 1), MIN_SENSE_BUDGET)
    ctx_lang = base_language(req.context_lang) or base_language(m.lang)
    target = base_language(req.target_lang)
    show_pos = len({c.pos for c in m.candidates}) > 1
    lines = [head, ctx_line]
    for sid, cid in ids:
        ev = evidence.get(cid) or SenseEvidence(next(c for c in m.candidates if c.id == cid))
        lines.append(sense_line(sid, ev, ctx_lang, target, show_pos, per_sense))
    return "\n".join(lines)


__all__ = ["CONTEXT_BUDGET", "MENTION_BUDGET", "context", "mention_block",
           "sense_line", "sentence_spans"]
