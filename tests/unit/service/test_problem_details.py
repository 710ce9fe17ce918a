"""A problem's ``detail``: one line, at most :data:`MAX_DETAIL` characters (its start and its
end kept), encodable whatever it quotes, and a store error's without the machine's paths and
without a ``<path>`` placeholder."""

from __future__ import annotations

import json

from kg_rag.errors import InputError, StoreError
from kg_rag.service.problems import MAX_DETAIL, from_error, problem_body, scrub_paths, short_detail


def test_a_long_detail_keeps_its_start_and_its_advice() -> None:
    text = "no resource '" + "x" * 100_000 + "' in the store; give a question, document or concept IRI"
    cut = short_detail(text)
    assert len(cut) == MAX_DETAIL and "…" in cut
    assert cut.startswith("no resource 'xxx") and cut.endswith("give a question, document or concept IRI")
    assert short_detail("short enough") == "short enough"


def test_a_detail_is_one_line_and_always_encodable() -> None:
    assert short_detail("line one\nline two\r\nthree\u2028four") == "line one line two three four"
    assert short_detail("bad \ud800 text") == "bad \\ud800 text"
    body = problem_body(400, "bad input", "x\n" * 1000)
    assert len(body["detail"]) <= MAX_DETAIL and "\n" not in body["detail"]


def test_every_error_response_is_cut() -> None:
    r = from_error(InputError("y" * 10_000))
    detail = json.loads(r.body)["detail"]
    assert len(detail) == MAX_DETAIL


def test_store_paths_are_said_as_the_store() -> None:
    text = ("the update (nothing was written) failed on the store at /srv/kg/store: IO error: "
            "While appending to file: /srv/kg/store/000008.log: File too large")
    assert scrub_paths(text) == ("the update (nothing was written) failed on the store: IO error: "
                                 "While appending to file: 000008.log: File too large")
    assert scrub_paths("cannot read the store folder /home/a/s: Permission denied") == \
        "cannot read the store folder: Permission denied"
    # IRIs and URLs are no paths; a single "/" is kept
    for kept in ("The graph <urn:g:nope> does not exist", "http://127.0.0.1:7878/update failed",
                 "a / b", "<https://example.org/a/b> c"):
        assert scrub_paths(kept) == kept
    detail = json.loads(from_error(StoreError(text)).body)["detail"]
    assert "/srv" not in detail and "<path>" not in detail
