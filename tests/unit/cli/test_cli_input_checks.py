"""Bad command-line input is one line and the right exit code, never a traceback: arguments that
are not UTF-8, a query file that is not UTF-8, a port out of range or in use, a ``sparql
--format`` that does not fit the query, and "not found" (7) against empty input (2)."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from kg_rag.cli import main
from tests.support.paths import ROOT

MAIN = "import sys; from kg_rag.cli import main; sys.exit(main())"
SOURCE = "https://w3id.org/kg-rag/id/source/"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("cli-input") / "store")
    assert main(["--store", path, "load", str(ROOT / "demo" / "thesaurus.ttl")]) == 0
    return path


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("kg-rag: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


# --- arguments that are not UTF-8 ---------------------------------------------------------------
@pytest.mark.parametrize("command", [["ask"], ["annotate"], ["explain"], ["delete"],
                                     ["sparql"], ["ask", "Bank", "--focus"]])
def test_an_argument_that_is_not_utf8_is_a_usage_error(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    # what Python makes of the bytes "Bank\xff" on the command line
    assert main(["--store", str(path), *command, "Bank\udcff"]) == 2
    err = _one_line(capsys)
    assert "'Bank\\xff' is not UTF-8" in err
    assert not path.exists()      # refused before any store is opened or made


def test_an_argument_that_is_not_utf8_from_a_real_command_line(tmp_path: Path) -> None:
    path = tmp_path / "store"
    r = subprocess.run([sys.executable, "-c", MAIN, "--store", str(path), "ask", b"Bank\xff"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "not UTF-8" in r.stderr and "Traceback" not in r.stderr
    assert not path.exists()


def test_controls_in_a_bad_argument_are_shown_escaped(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(tmp_path / "s"), "ask", "a\u202eb\nc\udcfe"]) == 2
    err = _one_line(capsys)
    assert "\u202e" not in err and "a\\u202eb\\nc\\xfe" in err


# --- a query file that is not UTF-8 ------------------------------------------------------------
def test_a_query_file_that_is_not_utf8(store: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_bytes(b"\xff\xfe")
    assert main(["--store", store, "sparql", "--file", str(bad)]) == 2
    assert "bad.rq is not UTF-8" in _one_line(capsys)
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(b"ASK {}\xff")))
    assert main(["--store", store, "sparql", "--file", "-"]) == 2
    assert "standard input is not UTF-8" in _one_line(capsys)
    good = tmp_path / "bom.rq"
    good.write_bytes(b"\xef\xbb\xbfASK { GRAPH ?g { ?s ?p ?o } }")
    assert main(["--store", store, "sparql", "--file", str(good)]) == 0
    assert '"boolean":true' in capsys.readouterr().out


# --- serve --port ----------------------------------------------------------------------------------
@pytest.mark.parametrize("port", ["99999", "-5", "65536", "http"])
def test_a_port_out_of_range_is_a_usage_error(port: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store"
    with pytest.raises(SystemExit) as e:
        main(["--store", str(path), "serve", "--port", port])
    assert e.value.code == 2
    err = capsys.readouterr()
    assert "argument --port" in err.err and "Traceback" not in err.err
    assert "serving" not in err.err + err.out and not path.exists()


def test_a_port_in_use_is_one_line_before_anything_starts(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("uvicorn")
    path = tmp_path / "store"
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["--store", str(path), "serve", "--port", str(port)]) == 2
    err = _one_line(capsys)
    assert f"127.0.0.1:{port}" in err and "in use" in err and "serving" not in err
    assert not path.exists()      # no store made for a service that could not start


def test_port_zero_becomes_the_port_the_system_picks() -> None:
    """``serve --port 0``: the "serving" line and the store's announcement name the real port."""
    from kg_rag.cli.serve import check_listen

    port = check_listen("127.0.0.1", 0)
    assert 0 < port <= 65535
    with socket.socket() as sock:    # and it was free: it can be bound now
        sock.bind(("127.0.0.1", port))


# --- sparql --format that does not fit the query ----------------------------------------------
@pytest.mark.parametrize("query,fmt,fitting", [
    ("SELECT * WHERE { ?s ?p ?o } LIMIT 1", "ntriples", "json, csv, tsv or xml"),
    ("ASK { ?s ?p ?o }", "turtle", "json, csv, tsv or xml"),
    ("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1", "csv", "turtle or ntriples"),
    ("DESCRIBE <http://example.org/x>", "xml", "turtle or ntriples"),
])
def test_a_format_that_does_not_fit_the_query(store: str, query: str, fmt: str, fitting: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", store, "sparql", "--format", fmt, query]) == 2
    err = _one_line(capsys)
    assert f"--format {fmt} does not fit" in err and fitting in err
    assert capsys.readouterr().out == ""


def test_formats_that_fit_still_answer(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1"
    assert main(["--store", store, "sparql", "--format", "ntriples", construct]) == 0
    assert capsys.readouterr().out.rstrip().endswith(" .")
    assert main(["--store", store, "sparql", "--json", construct]) == 0     # json: Turtle, as documented
    assert main(["--store", store, "sparql", "--format", "csv", "ASK { GRAPH ?g { ?s ?p ?o } }"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "true"


# --- not found (7) against empty input (2) ----------------------------------------------------
@pytest.mark.parametrize("args,code", [
    (["explain", "0123456789abcdef0123456789abcdef"], 7),        # an unknown short id
    (["explain", "question/0123456789abcdef0123456789abcdef"], 7),
    (["explain", "no-such-document"], 7),
    (["explain", "https://w3id.org/kg-rag/id/question/nope"], 7),  # an unknown IRI
    (["explain", "<https://w3id.org/kg-rag/id/question/nope>"], 7),
    (["explain", ""], 2),
    (["drop-source", "nope"], 7),                                # an unknown file name
    (["drop-source", "nope.ttl"], 7),
    (["drop-source", SOURCE + "nope"], 7),                       # an unknown IRI
    (["drop-source", f"<{SOURCE}nope>"], 7),
    (["drop-source", ""], 2),
    (["delete", "nope"], 7),
    (["delete", ""], 2),
    (["delete", "  "], 2),
])
def test_not_found_is_seven_in_every_form(store: str, args: list[str], code: int,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", store, *args]) == code
    _one_line(capsys)


def test_explain_document_not_found_is_seven(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", store, "ask", "branch", "-k", "1"]) == 0
    out = capsys.readouterr().out
    question = next(w for w in out.split() if w.startswith("<https://w3id.org/kg-rag/id/question/"))
    assert main(["--store", store, "explain", question, "--document", "no-such-document"]) == 7
    _one_line(capsys)


@pytest.mark.parametrize("prefix", ["ex", "z", "ab", "foo"])
def test_an_undeclared_prefix_is_named_whatever_the_engine_says(
        store: str, prefix: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The engine reads some undeclared prefixes (``ex:``, ``ab:``) as the start of a keyword and
    says "expected OPTIONAL"; the error names the prefix instead."""
    assert main(["--store", store, "sparql", f"SELECT * WHERE {{ ?s {prefix}:p ?o }}"]) == 4   # QueryError
    assert f"'{prefix}:' is not declared" in _one_line(capsys)


def test_a_declared_prefix_keeps_the_engine_s_message(store: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", store, "sparql", "PREFIX ex: <http://e/> SELECT * WHERE { ?s ex:p ?o . ?o }"]) == 4
    err = _one_line(capsys)
    assert "not declared" not in err and "line 1, column" in err
