"""Document readers: formats, folders, and every kind of bad input as one-line InputErrors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.documents import iter_paragraphs, read_documents
from kg_rag.errors import InputError


def test_formats_and_folder(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Erster Absatz.\n\nSecond paragraph.", encoding="utf-8")
    (tmp_path / "b.md").write_text("# Branches\n\nThe fruits weighed down the branches.", encoding="utf-8")
    (tmp_path / "c.html").write_text(
        "<html><head><title>Bar</title><style>p{}</style></head><body><p>A <b>pub</b> by the river.</p>"
        "<script>alert(1)</script><p>Second &amp; last.</p></body></html>", encoding="utf-8")
    (tmp_path / "d.jsonl").write_text(
        json.dumps({"id": "x1", "text": "הפירות העמיסו על הבדים", "lang": "he", "title": "t"}) + "\n\n"
        + json.dumps({"id": 7, "text": "Der Hahn kräht."}) + "\n", encoding="utf-8")
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    docs = {d.id: d for d in read_documents([tmp_path], limit=10_000)}
    assert set(docs) == {"a", "b", "c", "x1", "7"}
    assert docs["b"].title == "Branches"
    assert docs["c"].title == "Bar"
    assert docs["c"].text == "A pub by the river.\n\nSecond & last."
    assert "alert" not in docs["c"].text
    assert docs["x1"].lang == "he" and docs["7"].lang is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bin.txt", b"abc\x00def", "binary"),
        ("latin.txt", "caf\xe9".encode("latin-1"), "UTF-8"),
        ("big.txt", b"x" * 200, "over the limit"),
        ("bad.jsonl", b'{"id": "1", "text": "ok"}\n{"id": 2,', "bad.jsonl:2"),
        ("noid.jsonl", b'{"text": "no id"}\n', "id"),
        ("empty.md", b"   \n", "empty"),
        ("x.pdf", b"%PDF", "unsupported"),
    ],
)
def test_bad_input(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        read_documents([p], limit=100)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_path_and_duplicate_ids(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_documents([tmp_path / "nope.txt"], limit=100)
    (tmp_path / "a.jsonl").write_text('{"id": "1", "text": "a"}\n{"id": "1", "text": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="twice"):
        read_documents([tmp_path / "a.jsonl"], limit=100)


def test_paragraph_offsets() -> None:
    text = "  first para \n\n\nsecond\nstill second\n\n third "
    spans = list(iter_paragraphs(text))
    assert [text[s:e] for s, e in spans] == ["first para", "second\nstill second", "third"]
