"""Benchmark corpora built from the shared data (written under bench/out/, never committed).

Sentences in English, French and Spanish come from the WSD sets (Raganato XML) and the UNESCO
thesaurus's scope notes and definitions (English also from every 10th OEWN definition); Hebrew
from the Hebrew WordNet's definitions. Documents
are 1–4 sentences of one language drawn at random (seeded) with repetition, until the wanted
number of documents or bytes is reached.
"""

from __future__ import annotations

import gzip
import html
import json
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from bench.measure import BenchError

LANGS = ("en", "he", "fr", "es")
_DEF = re.compile(r"<Definition[^>]*>(.*?)</Definition>", re.S)
_NOSPACE_BEFORE = {",", ".", ";", ":", "!", "?", ")", "'s", "n't", "%"}


def wsd_sentences(path: Path, lang: str) -> list[tuple[str, str]]:
    """Sentences of a Raganato-format XML file as plain text (tokens joined, punctuation attached)."""
    out = []
    for sent in ET.parse(path).getroot().iter("sentence"):
        words: list[str] = []
        for tok in sent:
            w = (tok.text or "").replace("_", " ").strip()
            if not w:
                continue
            if words and (w in _NOSPACE_BEFORE or words[-1].endswith(("(", "'")) and lang != "en"):
                words[-1] += w
            else:
                words.append(w)
        text = " ".join(words)
        if len(text) > 20:
            out.append((text, lang))
    return out


def thesaurus_notes(path: Path) -> list[tuple[str, str]]:
    """Scope notes and definitions of a SKOS file in the corpus languages."""
    import pyoxigraph

    skos = "http://www.w3.org/2004/02/skos/core#"
    preds = {pyoxigraph.NamedNode(skos + "scopeNote"), pyoxigraph.NamedNode(skos + "definition")}
    out = []
    with open(path, "rb") as f:
        for t in pyoxigraph.parse(f, format=pyoxigraph.RdfFormat.TURTLE):
            if t.predicate in preds and isinstance(t.object, pyoxigraph.Literal):
                lang = (t.object.language or "").split("-")[0]
                if lang in LANGS and len(t.object.value) > 20:
                    out.append((" ".join(t.object.value.split()), lang))
    return out


def lexicon_definitions(path: Path, lang: str) -> list[tuple[str, str]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = f.read()
    return [(" ".join(html.unescape(m.group(1)).split()), lang) for m in _DEF.finditer(data)
            if len(m.group(1)) > 10]


def sentences(shared: Path) -> dict[str, list[str]]:
    """Sentences per language from whatever of the shared data is present."""
    pool: list[tuple[str, str]] = []
    wsd = shared / "wsd"
    for name, lang in (("semeval2007.data.xml", "en"), ("semeval2013-dev.fr.data.xml", "fr"),
                       ("semeval2013-dev.es.data.xml", "es")):
        if (wsd / name).exists():
            pool += wsd_sentences(wsd / name, lang)
    th = shared / "thesauri" / "unesco-thesaurus.ttl"
    if th.exists():
        pool += thesaurus_notes(th)
    he = shared / "wordnet" / "omw-he-2.0.xml.gz"
    if he.exists():
        pool += lexicon_definitions(he, "he")
    en = shared / "wordnet" / "english-wordnet-2025.xml.gz"
    if en.exists():  # every 10th OEWN definition: more English variety
        pool += lexicon_definitions(en, "en")[::10]
    by_lang: dict[str, list[str]] = {}
    for text, lang in pool:
        by_lang.setdefault(lang, []).append(text)
    if not by_lang:
        raise BenchError(f"no sentences found under {shared} (wsd/, thesauri/, wordnet/omw-he)")
    return {k: sorted(set(v)) for k, v in by_lang.items()}


def make_documents(shared: Path, dest: Path, n_docs: int | None = None, n_bytes: int | None = None,
                   seed: int = 0, prefix: str = "d") -> dict[str, object]:
    """Write ``{"id", "text", "lang"}`` JSON Lines; stop at ``n_docs`` documents or ``n_bytes``."""
    if n_docs is None and n_bytes is None:
        raise BenchError("make_documents needs n_docs or n_bytes")
    pool = sentences(shared)
    langs = sorted(pool)
    rng = random.Random(seed)
    total = 0
    chars = 0
    n = 0
    per_lang: dict[str, int] = {}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        while (n_docs is None or n < n_docs) and (n_bytes is None or total < n_bytes):
            lang = langs[n % len(langs)]
            text = " ".join(rng.choice(pool[lang]) for _ in range(rng.randint(1, 4)))
            line = json.dumps({"id": f"{prefix}{n:07d}", "text": text, "lang": lang},
                              ensure_ascii=False)
            f.write(line + "\n")
            total += len(text.encode("utf-8"))
            chars += len(text)
            per_lang[lang] = per_lang.get(lang, 0) + 1
            n += 1
    return {"documents": n, "bytes": total, "chars": chars, "languages": per_lang,
            "distinct_sentences": {k: len(v) for k, v in pool.items()}}


def read_documents(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def make_questions(shared: Path, dest: Path, n: int, seed: int = 3) -> int:
    """``n`` short questions (the first 3–8 words of a random sentence), languages in turn."""
    pool = sentences(shared)
    langs = sorted(pool)
    rng = random.Random(seed)
    with open(dest, "w", encoding="utf-8") as f:
        for i in range(n):
            lang = langs[i % len(langs)]
            words = rng.choice(pool[lang]).split()
            text = " ".join(words[: rng.randint(3, 8)]).rstrip(",;:")
            f.write(json.dumps({"text": text, "lang": lang}, ensure_ascii=False) + "\n")
    return n
