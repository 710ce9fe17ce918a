"""The prompt of the LLM sense selector, built from dictionary evidence (template ``wsd-v1``).

One request carries every ambiguous mention of a ``select()`` call. Each mention gets an id
local to the prompt (``M1``, ``M2`` …) and each of its candidates an id local to the mention
(``S1``, ``S2`` …). Everything that comes from documents or dictionaries is *data*: cleaned of
bidi and invisible control characters and written as a JSON string literal, so it cannot end its
quotes, start a line of its own, or forge an id; the system prompt says quoted text is never an
instruction.

Size: each mention block is kept under :data:`MENTION_BUDGET` estimated tokens whatever the
evidence (greedy: the first definition always, then usage labels, translations, examples, more
definitions and labels while they fit). Tokens are estimated by :func:`estimate_tokens`
(tiktoken cannot fetch its tables offline).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from kg_rag.errors import KgRagError
from kg_rag.model import LangText, SelectionRequest, SenseEvidence
from kg_rag.text.normalise import base_language, nfc, strip_bidi

TEMPLATE = "wsd-v1"
#: the rich template (:mod:`.rich`): more context, every kind of evidence, scheme and broader
RICH_TEMPLATE = "wsd-rich-v1"
#: the templates ``KG_RAG_LLM_PROMPT`` may name
TEMPLATES = (TEMPLATE, RICH_TEMPLATE)
MENTION_BUDGET = 300        # estimated tokens per mention block (header, context, all senses)
CONTEXT_BUDGET = 80         # estimated tokens of context around the mention
MIN_SENSE_BUDGET = 18       # a sense line always gets at least this much

LANGUAGE_NAMES = {
    "ar": "Arabic", "de": "German", "en": "English", "es": "Spanish", "fr": "French",
    "he": "Hebrew", "it": "Italian", "ja": "Japanese", "nl": "Dutch", "pl": "Polish",
    "pt": "Portuguese", "ru": "Russian", "yi": "Yiddish", "zh": "Chinese",
}

_TOKEN_PIECE = re.compile(r"[A-Za-z]+|[0-9]+|[^\W\d_]+|\s+|.", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """Estimated BPE tokens of ``text`` (conservative for GPT-4o-class tokenizers).

    Runs of ASCII letters count ``ceil(n/4)``, digit runs ``ceil(n/3)``, runs of other letters
    (Hebrew, Arabic, Cyrillic, accented Latin …) ``ceil(n/2)``, whitespace nothing, every other
    character (punctuation, quotes, brackets, marks) one.
    """
    total = 0
    for piece in _TOKEN_PIECE.findall(text):
        first = piece[0]
        if first.isspace():
            continue
        if first.isascii() and first.isalpha():
            total += math.ceil(len(piece) / 4)
        elif first.isascii() and first.isdigit():
            total += math.ceil(len(piece) / 3)
        elif first.isalpha() or first.isdigit():
            total += math.ceil(len(piece) / 2)
        else:
            total += 1
    return total


def message_tokens(messages: Sequence[dict[str, str]]) -> int:
    """Estimated prompt tokens of a chat request (4 per message for the chat framing)."""
    return sum(4 + estimate_tokens(m["content"]) for m in messages) + 3


# --- templates ------------------------------------------------------------------------------

@cache
def template_text(name: str) -> str:
    """A shipped prompt file (``kg_rag/prompts/<name>``), read through importlib.resources."""
    try:
        return resources.files("kg_rag").joinpath("prompts", name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as e:
        raise KgRagError(
            f"prompt template {name} is missing from the kg_rag package; reinstall kg-rag"
        ) from e


#: the files of a template, in the order :func:`template_sha256` hashes them
TEMPLATE_FILES = ("system.txt", "user.txt", "retry.txt", "schema.json")


@cache
def template_sha256(template: str = TEMPLATE) -> str:
    """SHA-256 of the template's shipped files (name and text of each, in
    :data:`TEMPLATE_FILES` order): two runs with the same hash sent the same instructions."""
    h = hashlib.sha256()
    for part in TEMPLATE_FILES:
        name = f"{template}.{part}"
        h.update(name.encode("utf-8") + b"\x1f" + template_text(name).encode("utf-8") + b"\x1e")
    return h.hexdigest()


def _schema_parts(template: str = TEMPLATE) -> dict[str, Any]:
    parts: dict[str, Any] = json.loads(template_text(f"{template}.schema.json"))
    return parts


def check_template(name: str) -> str:
    """``name`` if it is a shipped template, else ConfigError naming them."""
    from kg_rag.errors import ConfigError

    if name not in TEMPLATES:
        raise ConfigError(f"KG_RAG_LLM_PROMPT={name!r} is no prompt template; use one of "
                          f"{', '.join(TEMPLATES)}")
    return name


# --- data cleaning and quoting --------------------------------------------------------------

_SPACES = re.compile(r"\s+")


def clean(text: str) -> str:
    """NFC, bidi/invisible format and control characters removed, whitespace collapsed."""
    t = strip_bidi(nfc(text))
    t = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
                for ch in t if unicodedata.category(ch) not in ("Cf", "Co", "Cs", "Cn"))
    return _SPACES.sub(" ", t).strip()


def quote(text: str) -> str:
    """Data as a JSON string literal (the fence around everything from outside)."""
    return json.dumps(text, ensure_ascii=False)


def truncate(text: str, budget: int) -> str:
    """The longest prefix of ``text`` (cut at a space when possible, marked with …) whose quoted
    form stays within ``budget`` tokens; "" when not even that fits."""
    if estimate_tokens(quote(text)) <= budget:
        return text

    def fits(t: str) -> bool:
        return estimate_tokens(quote(t)) <= budget

    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(text[:mid] + "…"):
            lo = mid
        else:
            hi = mid - 1
    best = text[:lo].rstrip() + "…"
    space = text[:lo].rfind(" ")
    if space > lo // 2 and fits(text[:space].rstrip() + "…"):
        best = text[:space].rstrip() + "…"
    if not fits(best):
        return ""
    return best if best != "…" else ""


# --- the prompt -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class MentionSlot:
    """One mention as the prompt names it."""

    mid: str                               # M1, M2 …
    index: int                             # position in the select() requests
    ids: tuple[tuple[str, str], ...]       # (S1, candidate id), … in candidate order
    block: str                             # rendered data block
    tokens: int                            # estimated tokens of the block

    @property
    def sense_ids(self) -> tuple[str, ...]:
        return tuple(s for s, _ in self.ids)

    def candidate_id(self, sid: str) -> str:
        return dict(self.ids)[sid]


@dataclass(frozen=True, slots=True)
class Prompt:
    template: str
    messages: tuple[dict[str, str], ...]
    response_format: dict[str, Any]
    slots: tuple[MentionSlot, ...]
    sha256: str
    tokens_estimate: int


def prompt_sha256(messages: Sequence[dict[str, str]]) -> str:
    """SHA-256 of the exact messages sent (canonical JSON, UTF-8)."""
    canon = json.dumps(list(messages), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _lang_name(code: str) -> str:
    return f"{LANGUAGE_NAMES.get(code, code)} ({code})"


def _pick(texts: Iterable[LangText], langs: Sequence[str]) -> list[LangText]:
    """Cleaned, de-duplicated texts ordered by preferred language, then original order."""
    seen: set[str] = set()
    items: list[tuple[int, int, LangText]] = []
    for n, lt in enumerate(texts):
        t = clean(lt.text)
        if not t or t.casefold() in seen:
            continue
        seen.add(t.casefold())
        lang = base_language(lt.lang)
        rank = langs.index(lang) if lang in langs else len(langs)
        items.append((rank, n, LangText(t, lang)))
    return [lt for _, _, lt in sorted(items, key=lambda x: (x[0], x[1]))]


def _grouped(texts: Sequence[LangText], field: str, skip: set[str]) -> list[str]:
    """``tr@en "fabric; cloth"`` per language, in the order the languages first appear."""
    by_lang: dict[str, list[str]] = {}
    for lt in texts:
        if lt.text.casefold() in skip:
            continue
        by_lang.setdefault(lt.lang, []).append(lt.text)
    return [f"{field}@{lang or 'und'} {quote('; '.join(vals[:4]))}" for lang, vals in by_lang.items()]


def _is_label(text: str) -> bool:
    """A register/usage label ("literary", "rare", "Talmudic") rather than a note."""
    return len(text) <= 24 and len(text.split()) <= 3


@dataclass(frozen=True, slots=True)
class SenseParts:
    """What a sense line can say of one sense, each part cleaned, de-duplicated and ordered by
    preferred language (the documents' language or English first for glosses, the context's
    first for usage): the line's head (id and bracketed tags), definitions, examples, grouped
    translations and labels, and usage notes. ``gloss_langs`` is that order, for the
    templates' further parts."""

    head: str
    gloss_langs: list[str]
    definitions: list[LangText]
    examples: list[LangText]
    translations: list[str]
    labels: list[str]
    notes: list[str]


def sense_parts(sid: str, ev: SenseEvidence, ctx_lang: str, target_lang: str, show_pos: bool,
                tag_budget: int) -> SenseParts:
    """:class:`SenseParts` of ``ev`` under the id ``sid``; its tags (part of speech, register
    labels) cut to ``tag_budget`` estimated tokens."""
    cand = ev.candidate
    gloss_langs = [x for x in dict.fromkeys((target_lang, "en", ctx_lang)) if x]
    usage_langs = [x for x in dict.fromkeys((ctx_lang, target_lang, "en")) if x]
    tags = [cand.pos] if cand.pos and show_pos else []
    usage = _pick(ev.usage, gloss_langs)
    tags += [u.text for u in usage if _is_label(u.text)]
    notes = [f"note@{u.lang or 'und'} {quote(u.text)}" for u in usage if not _is_label(u.text)]
    tag_text = truncate("; ".join(tags), tag_budget) if tags else ""
    lemma_keys = {clean(cand.lemma).casefold()} if cand.lemma else set()
    translations = _grouped(_pick(ev.translations, gloss_langs), "tr", lemma_keys)
    tr_keys = {clean(t.text).casefold() for t in ev.translations} | lemma_keys
    return SenseParts(sid + (f" [{tag_text}]" if tag_text else ""), gloss_langs,
                      _pick(ev.definitions, gloss_langs), _pick(ev.examples, usage_langs),
                      translations, _grouped(_pick(ev.labels, gloss_langs), "lbl", tr_keys), notes)


class Line:
    """A sense line filled within ``budget`` estimated tokens: :meth:`add` appends a part only
    if it fits, :meth:`add_cut` appends a definition cut to the room given."""

    def __init__(self, head: str, budget: int) -> None:
        self.parts = [head]
        self.used = estimate_tokens(head)
        self.budget = budget

    def add(self, part: str) -> None:
        cost = estimate_tokens(" " + part)
        if self.used + cost <= self.budget:
            self.parts.append(part)
            self.used += cost

    def left(self, prefix: str) -> int:
        """The tokens left after ``prefix``."""
        return self.budget - self.used - estimate_tokens(" " + prefix)

    def add_cut(self, prefix: str, text: str, room: int) -> None:
        cut = truncate(text, room)
        if cut:
            part = prefix + quote(cut)
            self.parts.append(part)
            self.used += estimate_tokens(" " + part)

    def text(self) -> str:
        return " ".join(self.parts)


def _sense_line(sid: str, ev: SenseEvidence, ctx_lang: str, target_lang: str, show_pos: bool,
                budget: int) -> str:
    """One sense: cheap and telling parts first (translation into the documents' language or
    English, one definition cut to fit), then examples, more definitions, other languages."""
    sp = sense_parts(sid, ev, ctx_lang, target_lang, show_pos, max(budget // 3, 4))
    defs, examples = sp.definitions, sp.examples
    line = Line(sp.head, budget)
    if sp.translations:
        line.add(sp.translations[0])
    if defs:  # one definition always, cut to what is left
        prefix = f"def@{defs[0].lang or 'und'} "
        line.add_cut(prefix, defs[0].text, line.left(prefix))
    elif sp.labels:
        line.add(sp.labels[0])
    for ex in examples[:1]:
        line.add(f"ex@{ex.lang or 'und'} {quote(ex.text)}")
    for d in [d for d in defs[1:] if d.lang != defs[0].lang][:1]:
        line.add(f"def@{d.lang or 'und'} {quote(d.text)}")
    for part in sp.translations[1:3] + sp.notes[:1] + sp.labels[:3]:
        line.add(part)
    for ex in examples[1:2]:
        line.add(f"ex@{ex.lang or 'und'} {quote(ex.text)}")
    return line.text()


def _context(req: SelectionRequest, budget: int) -> str:
    text = clean(req.context)
    surface = clean(req.mention.text)
    at = text.find(surface) if surface else -1
    if at >= 0 and text.find(surface, at + 1) < 0:
        text = f"{text[:at]}⟦{surface}⟧{text[at + len(surface):]}"
    if estimate_tokens(quote(text)) <= budget:
        return text
    centre = at if at >= 0 else 0
    best: str | None = None
    half = 20
    while True:  # widen a window around the mention while it fits
        lo, hi = max(0, centre - half), min(len(text), centre + len(surface) + 2 + half)
        window = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
        if estimate_tokens(quote(window)) > budget:
            break
        best = window
        if lo == 0 and hi == len(text):
            break
        half += 20
    return best if best is not None else truncate(text[max(0, centre - 10):], budget)


def mention_head(mid: str, req: SelectionRequest, lang_suffix: str, width: int) -> str:
    """A mention block's first line: its id, the mention's text, up to three of its candidates'
    lemmas other than the text (each part cut to ``width``) and its language."""
    m = req.mention
    lemmas = list(dict.fromkeys(clean(c.lemma) for c in m.candidates if c.lemma))
    lemmas = [x for x in lemmas if x != clean(m.text)]
    head = f"{mid} {quote(truncate(clean(m.text), width) or '…')}"
    if lemmas:
        head += f" lemma {quote(truncate('; '.join(lemmas[:3]), width) or '…')}"
    return head + f" ({base_language(m.lang) or base_language(req.context_lang) or 'und'}{lang_suffix})"


def _mention_block(mid: str, req: SelectionRequest, ids: Sequence[tuple[str, str]],
                   same_context_as: str | None, lang_suffix: str) -> str:
    m = req.mention
    head = mention_head(mid, req, lang_suffix, 16)
    if same_context_as:
        ctx_line = f"context: same as {same_context_as}"
    else:
        ctx_line = f"context: {quote(_context(req, CONTEXT_BUDGET))}"
    fixed = estimate_tokens(head) + estimate_tokens(ctx_line) + 2
    evidence = {ev.candidate.id: ev for ev in req.evidence}
    n = max(len(ids), 1)
    per_sense = max((MENTION_BUDGET - fixed) // n, MIN_SENSE_BUDGET)
    ctx_lang = base_language(req.context_lang) or base_language(m.lang)
    target = base_language(req.target_lang)
    show_pos = len({c.pos for c in m.candidates}) > 1
    lines = [head, ctx_line]
    for sid, cid in ids:
        ev = evidence.get(cid) or SenseEvidence(next(c for c in m.candidates if c.id == cid))
        lines.append(_sense_line(sid, ev, ctx_lang, target, show_pos, per_sense))
    return "\n".join(lines)


def candidate_ids(req: SelectionRequest) -> list[str]:
    """Distinct candidate ids in candidate order."""
    return list(dict.fromkeys(c.id for c in req.mention.candidates))


def build_slots(requests: Sequence[SelectionRequest], indices: Sequence[int],
                template: str = TEMPLATE) -> list[MentionSlot]:
    """Number the mentions ``indices`` of ``requests`` (M1 …) and render their data blocks
    (``template``: :data:`TEMPLATE`, or :data:`RICH_TEMPLATE` for :mod:`.rich`'s blocks)."""
    if template == RICH_TEMPLATE:
        from kg_rag.senses.llm.rich import mention_block as block_of
    else:
        block_of = _mention_block
    pairs = {(base_language(requests[i].context_lang), base_language(requests[i].target_lang))
             for i in indices}
    differing = {p for p in pairs if p[1] and p[0] and p[0] != p[1]}
    per_mention_note = len(differing) > 1
    slots: list[MentionSlot] = []
    contexts: dict[str, str] = {}
    for k, i in enumerate(indices, start=1):
        req, mid = requests[i], f"M{k}"
        ids = tuple((f"S{j}", cid) for j, cid in enumerate(candidate_ids(req), start=1))
        key = clean(req.context)
        if template == RICH_TEMPLATE:  # each mention its own sentences, marked
            key = f"{req.mention.start}:{req.mention.end}:{key}"
        target = base_language(req.target_lang)
        suffix = f"; documents in {target}" if per_mention_note and target else ""
        block = block_of(mid, req, ids, contexts.get(key), suffix)
        contexts.setdefault(key, mid)
        slots.append(MentionSlot(mid, i, ids, block, estimate_tokens(block)))
    return slots


def language_note(requests: Sequence[SelectionRequest], slots: Sequence[MentionSlot]) -> str:
    pairs = {(base_language(requests[s.index].context_lang) or base_language(requests[s.index].mention.lang),
              base_language(requests[s.index].target_lang)) for s in slots}
    differing = {p for p in pairs if p[0] and p[1] and p[0] != p[1]}
    if len(differing) == 1:
        src, dst = differing.pop()
        return (f"The context is in {_lang_name(src)}; the documents searched are in "
                f"{_lang_name(dst)}. Choose the sense meant in the context.")
    if differing:
        return "The documents searched are in other languages than the contexts (see each mention)."
    return ""


def response_format(slots: Sequence[MentionSlot], template: str = TEMPLATE) -> dict[str, Any]:
    """``json_schema`` response format whose ids are enums, per mention."""
    parts = _schema_parts(template)
    items = []
    for s in slots:
        item = json.loads(json.dumps(parts["item"]))
        item["properties"]["mention"]["enum"] = [s.mid]
        item["properties"]["sense"]["enum"] = list(s.sense_ids)
        items.append(item)
    envelope: dict[str, Any] = parts["envelope"]
    schema = envelope["json_schema"]["schema"]
    schema["properties"]["answers"]["items"] = items[0] if len(items) == 1 else {"anyOf": items}
    return envelope


def build_prompt(requests: Sequence[SelectionRequest], slots: Sequence[MentionSlot],
                 problems: dict[str, str] | None = None, template: str = TEMPLATE) -> Prompt:
    """The messages for ``slots`` (rendered by :func:`build_slots` with the same ``template``);
    with ``problems`` (mention id → what was wrong) a retry."""
    user = string.Template(template_text(f"{template}.user.txt")).substitute(
        language_note=language_note(requests, slots),
        mention_ids=", ".join(s.mid for s in slots),
        mentions="\n\n".join(s.block for s in slots),
    ).lstrip("\n")
    if problems:
        lines = "\n".join(f"{mid}: {text}" for mid, text in problems.items())
        user = string.Template(template_text(f"{template}.retry.txt")).substitute(
            problems=lines) + "\n" + user
    messages = (
        {"role": "system", "content": template_text(f"{template}.system.txt").strip()},
        {"role": "user", "content": user.strip()},
    )
    return Prompt(template, messages, response_format(slots, template), tuple(slots),
                  prompt_sha256(messages), message_tokens(messages))
