"""The annotator gives the same mentions on the embedded store and on a real ``oxigraph serve``
(lexicon through the CSV results of a remote endpoint, candidates through a rendered VALUES block)."""

from __future__ import annotations

import pyoxigraph

from kg_rag.annotate import Lexicon, LexiconAnnotator
from kg_rag.store import Change, EmbeddedStore, RemoteStore
from tests.support.oxigraph_server import clear
from tests.support.paths import DATA

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
