"""The tiny WordNet-like fixture of the sense-selection tests (tests/data/senses-fixture.trig)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.model import Candidate
from kg_rag.store import Change, EmbeddedStore
from tests.support.paths import DATA

ILI = "http://globalwordnet.org/ili/"
EN = "https://w3id.org/kg-rag/id/wn/fix-en/"
HE = "https://w3id.org/kg-rag/id/wn/fix-he/"


def load_fixture(store: EmbeddedStore) -> EmbeddedStore:
    store.oxigraph.load(path=str(DATA / "senses-fixture.trig"), format=pyoxigraph.RdfFormat.TRIG)
    return store


def bank_candidates() -> tuple[Candidate, ...]:
    return (
        Candidate(ILI + "i1", EN + "bank-n-1", EN + "bank-n", "bank", "en", 1, "bank%1:14:00::", "i1", "noun"),
        Candidate(ILI + "i2", EN + "bank-n-2", EN + "bank-n", "bank", "en", 2, "bank%1:17:01::", "i2", "noun"),
    )


def bd_candidates() -> tuple[Candidate, ...]:
    return (
        Candidate(ILI + "i7", HE + "bd-n-1", HE + "bd-n", "בד", "he", 1, None, "i7", "noun"),
        Candidate(ILI + "i8", HE + "bd-n-2", HE + "bd-n", "בד", "he", 2, None, "i8", "noun"),
    )


def fruit_candidates() -> tuple[Candidate, ...]:
    return (Candidate(ILI + "i9", HE + "pri-n-1", HE + "pri-n", "פרי", "he", 1, None, "i9", "noun"),)


def add_branch_sense_texts(store: EmbeddedStore, register: bool = False) -> None:
    """Give the branch sense of בד (``bd-n-2``) sense-level evidence: a Hebrew definition, the
    usage note "literary", a translation to the English branch sense, and with ``register`` the
    register lexinfo:formalRegister."""
    g = NamedNode("https://w3id.org/kg-rag/id/source/fix-he")
    s, t = NamedNode(HE + "bd-n-2"), NamedNode(HE + "tr-1")
    vt, lexinfo = "http://www.w3.org/ns/lemon/vartrans#", "http://www.lexinfo.net/ontology/3.0/lexinfo#"
    quads = [
        Quad(s, NamedNode("http://www.w3.org/2004/02/skos/core#definition"), Literal("ענף של עץ", language="he"), g),
        Quad(s, NamedNode(lexinfo + "usageNote"), Literal("literary", language="en"), g),
        Quad(t, NamedNode(vt + "source"), s, g),
        Quad(t, NamedNode(vt + "target"), NamedNode(EN + "branch-n-1"), g),
    ]
    if register:
        quads.append(Quad(s, NamedNode(lexinfo + "register"), NamedNode(lexinfo + "formalRegister"), g))
    store.apply(Change(insert=quads))


def remove_bank_definition(store: EmbeddedStore) -> None:
    """Delete the English definition of the bank concept (``ili:i1``) from the fixture."""
    g = NamedNode("https://w3id.org/kg-rag/id/source/fix-en")
    store.apply(Change(delete=[Quad(NamedNode(ILI + "i1"), NamedNode("http://www.w3.org/2004/02/skos/core#definition"),
                                    Literal("a financial institution that accepts deposits and lends money",
                                            language="en"), g)]))


def lmf_store(store: EmbeddedStore, folder: Path, lmf: str, name: str = "test-lmf.xml") -> EmbeddedStore:
    """``store`` with a WN-LMF text loaded through the real loader (written to ``folder/name``)."""
    from loaders import load_file

    path = folder / name
    path.write_text(lmf, encoding="utf-8")
    load_file(store, path)
    return store
