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
        ("x.pdf", b"%PDF", "not a readable PDF"),
        ("x.docx", b"PK\x03\x04 not a zip", "not a readable DOCX"),
        ("x.odt", b"PK", "unsupported"),
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


def test_ids_and_sources_are_paths_relative_to_the_folder(tmp_path: Path) -> None:
    """Two notes.txt in two subfolders are two documents (the id was the stem: the second
    replaced the first from an earlier run), and what is recorded as the source is the path
    inside the folder, never the indexing machine's absolute path."""
    for sub, text in (("a", "Branches of the fig tree."), ("b", "The bank by the river.")):
        (tmp_path / "corpus" / sub).mkdir(parents=True)
        (tmp_path / "corpus" / sub / "notes.txt").write_text(text, encoding="utf-8")
    (tmp_path / "corpus" / "top.jsonl").write_text(json.dumps({"id": "j1", "text": "x"}) + "\n",
                                                   encoding="utf-8")
    docs = {d.id: d for d in read_documents([tmp_path / "corpus"], limit=10_000)}
    assert set(docs) == {"a/notes", "b/notes", "j1"}
    assert docs["a/notes"].source == "a/notes.txt" and docs["j1"].source == "top.jsonl:1"
    assert all(str(tmp_path) not in d.source for d in docs.values())
    (single,) = read_documents([tmp_path / "corpus" / "a" / "notes.txt"], limit=10_000)
    assert (single.id, single.source) == ("notes", "notes.txt")


def test_bad_files_in_a_folder_are_skipped_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "good.txt").write_text("Der Hahn kräht.", encoding="utf-8")
    (folder / "empty.md").write_text("  \n", encoding="utf-8")
    (folder / "bin.txt").write_bytes(b"abc\x00def")
    (folder / "paper.odt").write_bytes(b"PK")
    (folder / ".hidden.txt").write_text("not a document", encoding="utf-8")
    with pytest.raises(InputError, match="binary"):    # strict: the first bad file stops it
        read_documents([folder], limit=10_000)
    skipped: list[str] = []
    docs = read_documents([folder], limit=10_000, skipped=skipped)
    assert [d.id for d in docs] == ["good"]
    assert len(skipped) == 3 and all("\n" not in s for s in skipped)
    assert any("paper.odt" in s and "unsupported" in s for s in skipped)
    assert any("bin.txt" in s and "binary" in s for s in skipped)
    assert any("empty.md" in s and "empty" in s for s in skipped)
    (folder / "good.txt").unlink()
    with pytest.raises(InputError, match="no file in this folder could be read"):
        read_documents([folder], limit=10_000, skipped=[])
