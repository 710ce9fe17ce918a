"""Peer workers for ``annotate``: dictionary matching at its limit, on the same label set.

    python -m bench.work_scan labels STORE OUT.tsv        # the annotator's match keys (lang TAB key)
    python -m bench.work_scan aho LABELS CORPUS.jsonl     # raw pyahocorasick scan
    python -m bench.work_scan flashtext LABELS CORPUS.jsonl
    python -m bench.work_scan annotate STORE CORPUS.jsonl  # ours: the annotator alone (no selection)

The label set is what ``sparql/select-match-keys.rq`` gives the annotator's lexicon: every match
key with its base language (keys without a language match in every language). The text of each
document is normalised by the annotator's own :func:`kg_rag.text.tokenise.normalise` (NFC,
case folding, niqqud removed, whitespace collapsed; ``scan``: non-word characters as spaces) —
counted in the scan time — and scanned with one automaton per language holding that language's
keys and the language-less ones in their scan form padded with spaces, so that hits fall on
word boundaries (as the annotator's phrase automaton does). Lemmatisation and Hebrew prefix
peeling, which the annotator does on top, are not part of this limit.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from pathlib import Path


def labels(store: str, out: str) -> dict[str, object]:
    from kg_rag.store import EmbeddedStore, queries
    from kg_rag.text.normalise import base_language

    st = EmbeddedStore(store)
    body, media = st.raw_query(queries.get("select-match-keys").text, "csv")
    st.close()
    seen: set[tuple[str, str]] = set()
    for row in csv.DictReader(io.StringIO(body.decode("utf-8"))):
        if row["key"]:
            seen.add((base_language(row["lang"]), row["key"]))
    with open(out, "w", encoding="utf-8") as f:
        for lang, key in sorted(seen):
            f.write(f"{lang}\t{key}\n")
    per: dict[str, int] = {}
    for lang, _ in seen:
        per[lang] = per.get(lang, 0) + 1
    return {"keys": len(seen), "languages": per}


def _read(labels_file: str, corpus: str) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    by_lang: dict[str, list[str]] = {}
    for line in Path(labels_file).read_text(encoding="utf-8").splitlines():
        lang, _, key = line.partition("\t")
        by_lang.setdefault(lang, []).append(key)
    docs = [json.loads(x) for x in Path(corpus).read_text(encoding="utf-8").splitlines() if x]
    return by_lang, docs


def _langs(docs: list[dict[str, str]]) -> list[str]:
    return sorted({d["lang"] for d in docs})


def aho(labels_file: str, corpus: str) -> dict[str, object]:
    import ahocorasick

    from kg_rag.annotate.lexicon import scan_form
    from kg_rag.text.tokenise import normalise

    by_lang, docs = _read(labels_file, corpus)
    t0 = time.perf_counter()
    autos = {}
    for lang in _langs(docs):
        a = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        for i, key in enumerate(by_lang.get(lang, []) + by_lang.get("", [])):
            a.add_word(f" {scan_form(key)} ", i)
        a.make_automaton()
        autos[lang] = a
    t1 = time.perf_counter()
    hits = chars = 0
    for d in docs:
        text = " " + normalise(d["text"]).scan + " "
        chars += len(d["text"])
        for _ in autos[d["lang"]].iter(text):
            hits += 1
    t2 = time.perf_counter()
    return {"build_s": t1 - t0, "scan_s": t2 - t1, "chars": chars, "hits": hits, "docs": len(docs)}


def flashtext(labels_file: str, corpus: str) -> dict[str, object]:
    from flashtext import KeywordProcessor

    from kg_rag.text.tokenise import normalise

    by_lang, docs = _read(labels_file, corpus)
    t0 = time.perf_counter()
    procs = {}
    for lang in _langs(docs):
        kp = KeywordProcessor(case_sensitive=True)  # the text is case-folded already
        keys = by_lang.get(lang, []) + by_lang.get("", [])
        # flashtext's word characters are ASCII only: add the letters of this language's keys
        kp.non_word_boundaries = set(kp.non_word_boundaries) | {
            c for k in keys for c in k if c.isalnum()}
        for key in keys:
            kp.add_keyword(key)
        procs[lang] = kp
    t1 = time.perf_counter()
    hits = chars = 0
    for d in docs:
        chars += len(d["text"])
        hits += len(procs[d["lang"]].extract_keywords(normalise(d["text"]).norm))
    t2 = time.perf_counter()
    return {"build_s": t1 - t0, "scan_s": t2 - t1, "chars": chars, "hits": hits, "docs": len(docs)}


def annotate(store: str, corpus: str) -> dict[str, object]:
    """Ours, matching only: the pipeline's annotator (normalisation, the phrase automaton,
    lemmatisation, Hebrew prefixes, candidate readings and their origins) over every document,
    no selection and no write, the store opened read-only. ``build_s``: the annotator's lexicon
    (from the cache folder, as a later process finds it), its indexes and each language's phrase
    automaton (as the peers' ``build_s`` holds theirs); ``scan_s``: the first pass
    over the corpus, as one index run meets it (its candidate caches start empty);
    ``warm_s``: a second pass, every candidate set cached."""
    from kg_rag.annotate.annotator import LexiconAnnotator
    from kg_rag.annotate.lexicon import store_lexicon
    from kg_rag.store import open_store

    docs = [json.loads(x) for x in Path(corpus).read_text(encoding="utf-8").splitlines() if x]
    t0 = time.perf_counter()
    st = open_store(store, read_only=True)
    ann = LexiconAnnotator(st, store_lexicon(st))
    ann.warm_up()
    for lang in _langs(docs):   # each language's phrase automaton, built on first use
        ann.annotate("warming up", lang)
    t1 = time.perf_counter()
    hits = chars = 0
    for d in docs:
        chars += len(d["text"])
        hits += len(ann.annotate(d["text"], d["lang"]))
    t2 = time.perf_counter()
    for d in docs:
        ann.annotate(d["text"], d["lang"])
    t3 = time.perf_counter()
    st.close()
    return {"build_s": t1 - t0, "scan_s": t2 - t1, "warm_s": t3 - t2, "chars": chars, "hits": hits,
            "docs": len(docs)}


def main(argv: list[str]) -> int:
    cmd, *args = argv
    fn = {"labels": labels, "aho": aho, "flashtext": flashtext, "annotate": annotate}.get(cmd)
    if fn is None:
        raise SystemExit(f"unknown command {cmd}")
    print(json.dumps(fn(*args)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
