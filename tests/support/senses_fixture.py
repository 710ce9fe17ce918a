"""The tiny WordNet-like fixture of the sense-selection tests (tests/data/senses-fixture.trig)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph

from kg_rag.model import Candidate
from kg_rag.store import EmbeddedStore
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


def lmf_store(store: EmbeddedStore, folder: Path, lmf: str, name: str = "test-lmf.xml") -> EmbeddedStore:
    """``store`` with a WN-LMF text loaded through the real loader (written to ``folder/name``)."""
    from loaders import load_file

    path = folder / name
    path.write_text(lmf, encoding="utf-8")
    load_file(store, path)
    return store
