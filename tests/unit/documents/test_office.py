"""PDF and DOCX documents (the ``documents`` extra): their text, title and page offsets, indexed
and found by a question; damaged files and a missing extra are one-line errors naming the file or
the extra, and in a folder they are skipped and named."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kg_rag.api import KnowledgeGraph
from kg_rag.cli.demo import build_demo
from kg_rag.documents import read_documents
from kg_rag.errors import ConfigError, InputError
from kg_rag.store import EmbeddedStore

pytest.importorskip("pypdf")
docx = pytest.importorskip("docx")

PAGES = ["The fruits weighed down the branches of the fig tree.",
         "The river bank was muddy after the rain."]


def make_pdf(path: Path, pages: list[str], title: str = "Orchard notes") -> Path:
    """A PDF of one line of Helvetica text per page, written byte by byte (no PDF writer)."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [" + " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
            + f"] /Count {len(pages)} >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
                    f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>")
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objs.append(f"<< /Title ({title}) >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += (f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info {len(objs)} 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    path.write_bytes(out)
    return path


def make_docx(path: Path) -> Path:
    d = docx.Document()
    d.add_heading("Sewing notes", level=1)
    d.add_paragraph("She bought a fabric to sew a new dress.")
    d.add_paragraph("")
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "cotton"
    table.rows[0].cells[1].text = "wool"
    d.save(str(path))
    return path


def test_a_pdf_is_its_pages_text_with_where_each_page_starts(tmp_path: Path) -> None:
    (doc,) = read_documents([make_pdf(tmp_path / "orchard.pdf", PAGES)], limit=100_000)
    assert doc.id == "orchard" and doc.title == "Orchard notes" and doc.source == "orchard.pdf"
    assert doc.text == "\n\n".join(PAGES)
    starts = doc.metadata["pages"]
    assert [doc.text[s:s + 10] for s in starts] == [p[:10] for p in PAGES]


def test_a_docx_is_its_paragraphs_and_table_rows(tmp_path: Path) -> None:
    (doc,) = read_documents([make_docx(tmp_path / "sewing.docx")], limit=100_000)
    assert doc.title == "Sewing notes"
    assert doc.text.split("\n\n") == ["Sewing notes", "She bought a fabric to sew a new dress.",
                                      "cotton | wool"]


def test_pdf_and_docx_documents_are_indexed_and_found(tmp_path: Path) -> None:
    folder = tmp_path / "office"
    folder.mkdir()
    make_pdf(folder / "orchard.pdf", PAGES)
    make_docx(folder / "sewing.docx")
    kg = KnowledgeGraph(EmbeddedStore(":memory:"))
    build_demo(kg)
    rep = kg.index([folder], lang="en")
    assert rep.documents == 2 and rep.skipped == []
    ids = [r.doc_id for r in kg.ask("the branches of the tree", lang="en", k=50).results]
    assert "orchard" in ids
    assert "sewing" in [r.doc_id for r in kg.ask("fabric", lang="en", k=50).results]


def test_damaged_files_and_a_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF")
    with pytest.raises(InputError, match="bad.pdf: not a readable PDF") as e:
        read_documents([bad], limit=1000)
    assert "\n" not in str(e.value)
    monkeypatch.setitem(sys.modules, "pypdf", None)     # as if the extra were not installed
    good = make_pdf(tmp_path / "orchard.pdf", PAGES)
    with pytest.raises(ConfigError, match=r"needs pypdf: .*pip install '\.\[documents\]'"):
        read_documents([good], limit=100_000)
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.txt").write_text("The river bank.", encoding="utf-8")
    make_pdf(folder / "scan.pdf", PAGES)
    skipped: list[str] = []
    docs = read_documents([folder], limit=100_000, skipped=skipped)
    assert [d.id for d in docs] == ["a"] and len(skipped) == 1 and "needs pypdf" in skipped[0]
