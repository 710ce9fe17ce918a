"""Loader caps (issues 21/22): a gzip bomb, too many XML elements, too long a text or too deep a
nesting is refused with the limit named, while the file is read and before the store is touched.
The limits come from Settings (``KG_RAG_LOAD_MAX_*``)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.errors import LoadError
from kg_rag.settings import Settings, load_settings
from kg_rag.store import EmbeddedStore
from loaders import Limits, load_file
from tests.support.paths import DATA

ROOT = Path(__file__).parents[3]
LMF = DATA / "loaders" / "mini-lmf.xml"
DMLEX_NS = 'xmlns="http://docs.oasis-open.org/lexidma/ns/dmlex-1.0"'


def gzip_bomb(path: Path, expanded: int, member: int = 8 << 20) -> None:
    """A valid .ttl.gz (one triple, then blank lines) that expands to ``expanded`` bytes: one
    compressed member of ``member`` newlines, repeated (gzip allows concatenated members)."""
    head = b"<urn:kgr-test:s> <urn:kgr-test:p> 1 .\n"
    one = gzip.compress(b"\n" * member, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(head))
        for _ in range(expanded // member):
            f.write(one)


def _state(store: EmbeddedStore) -> tuple[int, list[str]]:
    return len(store.oxigraph), [g.value for g in store.named_graphs()]


def test_the_settings_carry_the_limits() -> None:
    cfg = load_settings({"KG_RAG_LOAD_MAX_BYTES": "1000", "KG_RAG_LOAD_MAX_ELEMENTS": "50",
                         "KG_RAG_LOAD_MAX_TEXT": "70", "KG_RAG_LOAD_MAX_DEPTH": "9"})
    assert Limits.of(cfg) == Limits(max_bytes=1000, max_elements=50, max_text=70, max_depth=9)
    assert Limits.of(Settings()) == Limits()   # one set of defaults


def test_a_gzip_bomb_is_refused_with_the_limit_and_the_store_untouched(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.ttl.gz"
    gzip_bomb(bomb, 64 << 20)                      # 64 MB of Turtle from ~70 KB
    assert bomb.stat().st_size < 200_000
    cfg = Settings(load_max_bytes=10_000_000)
    with KnowledgeGraph(EmbeddedStore(":memory:"), cfg) as kg:
        kg.load([DATA / "loaders" / "skosxl.ttl"])
        before = _state(kg.store)  # type: ignore[arg-type]
        start = time.monotonic()
        with pytest.raises(LoadError) as e:
            kg.load([bomb])
        assert time.monotonic() - start < 5
        assert _state(kg.store) == before  # type: ignore[arg-type]
    msg = str(e.value)
    assert msg == (f"{bomb}: refused: more than 10,000,000 bytes once decompressed (the limit "
                   f"KG_RAG_LOAD_MAX_BYTES); nothing was loaded; raise the limit if the file "
                   f"is genuine")


def test_under_the_limit_the_same_file_loads(tmp_path: Path) -> None:
    small = tmp_path / "small.ttl.gz"
    gzip_bomb(small, 2 << 20, member=1 << 20)
    with EmbeddedStore(":memory:") as store:
        report = load_file(store, small, limits=Limits(max_bytes=4 << 20))
        assert report.triples == 1


def test_a_large_plain_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "big.nt"
    big.write_bytes(b"<urn:kgr-test:s> <urn:kgr-test:p> 1 .\n" * 1000)
    with EmbeddedStore(":memory:") as store, pytest.raises(LoadError,
                                                           match="more than 1,000 bytes \\(the limit"):
        load_file(store, big, limits=Limits(max_bytes=1000))


def test_a_gigabyte_bomb_with_the_default_limit_is_refused_without_memory_error(
        tmp_path: Path) -> None:
    """2 GB once decompressed, the default limit (1 GB), an address space of 1.5 GB: refused
    with the limit named, never a MemoryError (the file is measured before it is kept)."""
    bomb = tmp_path / "bomb.ttl.gz"
    gzip_bomb(bomb, 2 << 30, member=64 << 20)
    store = tmp_path / "store"
    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, resource.RLIM_INFINITY))
        from kg_rag.cli import main
        raise SystemExit(main(["--store", {str(store)!r}, "load", {str(bomb)!r}]))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_RAG_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**env, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2, out.stderr
    assert "MemoryError" not in out.stderr and "Traceback" not in out.stderr
    assert "more than 1,000,000,000 bytes once decompressed" in out.stderr
    assert "KG_RAG_LOAD_MAX_BYTES" in out.stderr


def _lmf(body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<LexicalResource>\n'
            '<Lexicon id="t" label="T" language="en" email="x@example.org" license="x" '
            f'version="1">\n{body}\n</Lexicon>\n</LexicalResource>\n')


def _entries(n: int) -> str:
    return "\n".join(f'<LexicalEntry id="t-e{i}"><Lemma writtenForm="w{i}" partOfSpeech="n"/>'
                     f'<Sense id="t-e{i}-1" synset="t-s{i}"/></LexicalEntry>' for i in range(n))


@pytest.mark.parametrize(("body", "lim", "expected"), [
    (_entries(400), Limits(max_elements=1000),
     "more than 1,000 XML elements (the limit KG_RAG_LOAD_MAX_ELEMENTS)"),
    ('<Synset id="t-s1" partOfSpeech="n"><Definition>' + "long " * 30_000 + "</Definition></Synset>",
     Limits(max_text=100_000),
     "a text of more than 100,000 characters (the limit KG_RAG_LOAD_MAX_TEXT)"),
    (f'<LexicalEntry id="t-{"x" * 200_000}"><Lemma writtenForm="w" partOfSpeech="n"/></LexicalEntry>',
     Limits(max_text=100_000),
     "an attribute value of more than 100,000 characters (the limit KG_RAG_LOAD_MAX_TEXT)"),
    ("<Synset id='t-s1'>" + "<Definition>" * 200 + "</Definition>" * 200 + "</Synset>",
     Limits(max_depth=50), "XML nested more than 50 elements deep (the limit KG_RAG_LOAD_MAX_DEPTH)"),
])
def test_wn_lmf_over_a_limit_is_refused_as_it_streams(tmp_path: Path, body: str, lim: Limits,
                                                      expected: str) -> None:
    path = tmp_path / "hostile.xml.gz"
    path.write_bytes(gzip.compress(_lmf(body).encode()))
    with EmbeddedStore(":memory:") as store:
        with pytest.raises(LoadError) as e:
            load_file(store, path, limits=lim)
        assert len(store.oxigraph) == 0
    msg = str(e.value)
    assert msg.startswith(f"{path}:") and expected in msg and "nothing was loaded" in msg


def test_dmlex_xml_over_a_limit_is_refused(tmp_path: Path) -> None:
    entries = "".join(f'<entry id="e{i}"><headword>w{i}</headword></entry>' for i in range(300))
    path = tmp_path / "many.dmlex.xml"
    path.write_text(f'<lexicographicResource {DMLEX_NS} langCode="he">{entries}'
                    f'</lexicographicResource>', encoding="utf-8")
    with EmbeddedStore(":memory:") as store, pytest.raises(LoadError,
                                                           match="more than 500 XML elements"):
        load_file(store, path, limits=Limits(max_elements=500))
    load_file(EmbeddedStore(":memory:"), path, limits=Limits(max_elements=1000))


def test_the_real_lexicon_samples_load_under_the_defaults(tmp_path: Path) -> None:
    with EmbeddedStore(":memory:") as store:
        assert load_file(store, LMF, limits=Limits()).senses > 0
