"""Property test: hostile strings bound as literals find exactly their rows, on both stores.

Embedded binds with ``substitutions=``, remote with a rendered ``VALUES`` block; inserts go
through :class:`Change` (rendered ``INSERT DATA``). Nothing is ever formatted into query text.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.store import Change, EmbeddedStore, RemoteStore, Store, Values
from tests.support.oxigraph_server import clear

G = NamedNode("urn:kgr-test:hostile")
P = NamedNode("urn:kgr-test:label")

PIECES = [
    '"', "'", '"""', "'''", "}", "{", "#", "\n", "\r", "\t", "@en", ">", "<", "\\", "\\n", "\\u0022",
    "?o", "$o", ";", ".", " ", "^^", "<urn:x>", "} } INSERT DATA { <urn:a> <urn:b> <urn:c> }",
    "בד", "הַבָּדִים", "\u05e9\u05c1\u05bc", "\u05e9\u05bc\u05c1",   # shin+dot+dagesh, both orders
    "\u0628\u0650\u0651", "\u0628\u0651\u0650",   # beh + kasra + shadda, both orders
    "عَرَبِيّ", "\u202e", "\u202b", "\u2066", "\u2069", "\u200f", "\u200e", "\u200d", "\ufeff",
    "e\u0301", "\u00e9", "ﬁ", "𝔘", "😀", "\x00", "\x7f",
]
text = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), min_size=1, max_size=6).map("".join)
lang = st.sampled_from([None, "en", "he", "ar", "en-gb", "he-il"])
literal = st.builds(lambda v, tag: Literal(v, language=tag) if tag else Literal(v), text, lang)


@pytest.fixture(scope="module", params=["embedded", "remote"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "embedded":
        yield EmbeddedStore(":memory:")
    else:
        url = request.getfixturevalue("oxigraph_url")
        clear(url)
        yield RemoteStore(url, timeout=10)


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(literals=st.lists(literal, min_size=1, max_size=4))
def test_bound_literal_finds_exactly_its_rows(store: Store, literals: list[Literal]) -> None:
    subjects = [NamedNode(f"urn:kgr-test:s{i}") for i in range(len(literals))]
    # one Change: replace the test graph with these statements
    store.apply(Change(drop_graphs=[G],
                       insert=[Quad(s, P, lit, G) for s, lit in zip(subjects, literals, strict=True)]))
    for lit in literals:
        expected = {s for s, other in zip(subjects, literals, strict=True) if other == lit}
        rows = store.select("select-subjects-by-literal", bind={"o": lit})
        assert {r["s"] for r in rows} == expected
        assert all(r["o"] == lit and r["g"] == G for r in rows)
        assert store.ask("ask-statement", bind={"o": lit, "p": P, "g": G})
    # all at once through a multi-row VALUES block
    rows = store.select("select-subjects-by-literal", values=Values.column("o", literals))
    assert {r["s"] for r in rows} == set(subjects)
    assert len(rows) == sum(literals.count(lit) for lit in literals)   # one join per VALUES row
    # and the graph holds exactly what was written, byte for byte
    got = store.construct("construct-graph", bind={"g": G})
    assert sorted(str(t.object) for t in got) == sorted(str(lit) for lit in literals)
