"""Property tests of the loaders' text helpers: sense-key escaping and N-Triples literals."""

from __future__ import annotations

import pyoxigraph
from hypothesis import given, settings
from hypothesis import strategies as st

from loaders.common import nt_literal
from loaders.iris import segment
from loaders.sensekeys import _NAMED, decode_sense_id, encode_sense_key

LEMMA = st.text(alphabet=st.sampled_from(list("abcxyz_.0-9-") + list(_NAMED.values())), min_size=1, max_size=20)


@settings(max_examples=300, deadline=None)
@given(LEMMA, st.sampled_from(["1:17:01::", "5:00:00:accustomed_to:00", "2:40:00::"]))
def test_sense_key_round_trip(lemma: str, rest: str) -> None:
    key = f"{lemma}%{rest}"
    assert decode_sense_id(encode_sense_key(key)) == key


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40), st.sampled_from(["", "en", "he"]))
def test_nt_literal_parses_back(text: str, lang: str) -> None:
    s = pyoxigraph.NamedNode("http://example.org/s")
    line = f"{s} {s} {nt_literal(text, lang)} .\n"
    [q] = list(pyoxigraph.parse(line.encode("utf-8"), pyoxigraph.RdfFormat.N_TRIPLES))
    assert q.object.value == text and (q.object.language or "") == lang


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_segment_makes_valid_iris(text: str) -> None:
    iri = "https://w3id.org/kg-rag/id/wn/x/" + segment(text)
    pyoxigraph.NamedNode(iri)  # raises on an invalid IRI
    line = f"<{iri}> <http://example.org/p> \"o\" .\n"
    [q] = list(pyoxigraph.parse(line.encode("utf-8"), pyoxigraph.RdfFormat.N_TRIPLES))
    assert q.subject.value == iri
