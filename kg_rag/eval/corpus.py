"""Reading WSD evaluation data: Raganato et al. (2017) unified XML and its key files."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from kg_rag.errors import InputError
from kg_rag.text.normalise import nfc

log = logging.getLogger(__name__)

#: Universal / Raganato POS tags → lexinfo parts of speech of candidate senses
POS_MAP: dict[str, tuple[str, ...]] = {
    "NOUN": ("noun",), "PROPN": ("noun", "properNoun"), "N": ("noun",),
    "VERB": ("verb",), "V": ("verb",),
    "ADJ": ("adjective",), "A": ("adjective",), "J": ("adjective",),
    "ADV": ("adverb",), "R": ("adverb",),
}


@dataclass(frozen=True, slots=True)
class Token:
    surface: str
    lemma: str
    pos: str
    instance: str | None = None     # instance id for a word to disambiguate


@dataclass(frozen=True, slots=True)
class Sentence:
    id: str
    tokens: tuple[Token, ...]


@dataclass(frozen=True, slots=True)
class Text:
    id: str
    sentences: tuple[Sentence, ...]


@dataclass(slots=True)
class Corpus:
    lang: str | None
    source: str
    texts: list[Text]
    problems: list[str] = field(default_factory=list)

    @property
    def instances(self) -> list[Token]:
        return [t for x in self.texts for s in x.sentences for t in s.tokens if t.instance]


def read_corpus(path: str | Path) -> Corpus:
    """Parse a unified-format corpus; :class:`InputError` names the file and line when malformed."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no corpus file {p}; pass --data FILE.data.xml")
    try:
        root = ET.parse(p).getroot()
    except ET.ParseError as e:
        raise InputError(f"{p} is not well-formed XML ({e}); expected the Raganato et al. "
                         f"unified format") from None
    if root.tag != "corpus":
        raise InputError(f"{p}: the root element is <{root.tag}>, expected <corpus> "
                         f"(Raganato et al. unified format)")
    lang = root.get("lang") or None
    corpus = Corpus(lang=lang.lower() if lang else None, source=root.get("source", p.name), texts=[])
    seen: set[str] = set()
    for ti, text in enumerate(root.iter("text")):
        sentences = []
        for si, sent in enumerate(text.iter("sentence")):
            tokens = []
            for el in sent:
                if el.tag not in ("wf", "instance"):
                    continue
                surface = nfc((el.text or "").strip())
                lemma = nfc(el.get("lemma") or surface)
                inst = el.get("id") if el.tag == "instance" else None
                if el.tag == "instance":
                    if not inst:
                        corpus.problems.append(f"an <instance> in sentence {sent.get('id', si)} has no id (skipped)")
                        inst = None
                    elif inst in seen:
                        corpus.problems.append(f"instance id {inst} occurs twice (second ignored)")
                        inst = None
                    else:
                        seen.add(inst)
                tokens.append(Token(surface, lemma, (el.get("pos") or "").upper(), inst))
            sentences.append(Sentence(sent.get("id", f"{ti}.{si}"), tuple(tokens)))
        corpus.texts.append(Text(text.get("id", str(ti)), tuple(sentences)))
    if not seen:
        raise InputError(f"{p} has no <instance> elements: nothing to evaluate")
    return corpus


def read_keys(path: str | Path) -> dict[str, tuple[str, ...]]:
    """``instance_id key [key …]`` per line; a malformed line raises :class:`InputError`."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"no key file {p}; pass --gold FILE.gold.key.txt")
    keys: dict[str, tuple[str, ...]] = {}
    with p.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2:
                raise InputError(f"{p}:{n}: expected 'instance_id key [key ...]', got {line.strip()!r}")
            keys[parts[0]] = tuple(parts[1:])
    if not keys:
        raise InputError(f"{p} has no keys")
    return keys


def write_keys(path: str | Path, answers: dict[str, str]) -> None:
    with Path(path).open("w", encoding="utf-8") as f:
        for iid, key in answers.items():
            f.write(f"{iid} {key}\n")
