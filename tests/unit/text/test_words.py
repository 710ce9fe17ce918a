"""The one home of text analysis: tokenisers per purpose, the lemmatiser, stop-word files, gloss words."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import kg_rag
import kg_rag.text
from kg_rag.text import english
from kg_rag.text.analyse import gloss_stopwords, gloss_words, lemma, lemmas, stopwords
from kg_rag.text.tokenise import english_tokens, gloss_tokens

PACKAGE = Path(kg_rag.__file__).parent
STOPWORDS = resources.files("kg_rag.text").joinpath("stopwords")


def test_gloss_tokens_keep_inner_apostrophes_hyphens_and_geresh() -> None:
    assert gloss_tokens("A well-known 3rd-rate don't (צה\u05f4ל) x") == [
        "A", "well-known", "rd-rate", "don't", "צה\u05f4ל", "x"]


def test_english_tokens_and_windows() -> None:
    assert english_tokens("He didn't go, 'twas the U.S.") == [
        "He", "didn't", "go", ",", "'twas", "the", "U.S", "."]
    text = "Then She quickly ran to the bank today."
    start = text.index("ran")
    assert english.before(text, start, 2) == ["she", "quickly"]
    assert english.after(text, start + 3, 3) == ["to", "the", "bank"]


def test_one_lemmatiser_for_both_uses() -> None:
    assert lemma("Branches", "en") == "branch"
    assert lemmas("Branches", "en") == ("branch",)
    # a language without lemma data: the match key itself, and no extra lemmas
    assert lemma("Branches", "xx") == "branches"
    assert lemmas("Branches", "xx") == ()
    # our code "no" is simplemma's "nb", for both
    assert lemma("husene", "no") == lemma("husene", "nb") != "husene"
    assert lemmas("husene", "no") == lemmas("husene", "nb") != ()


def test_gloss_words_drop_gloss_stop_words() -> None:
    assert gloss_words("something used to cut the branches of a tree", "en") == ["cut", "branch", "tree"]
    assert gloss_words("los árboles, algo de todos", "es") == ["árbol"]
    # a list of its own: "mine" is a pronoun to the annotator, a lemma in a gloss
    assert "mine" in stopwords("en") and "mine" not in gloss_stopwords("en")
    assert gloss_words("clear the mines", "en") == ["clear", "mine"]
    assert "something" in gloss_stopwords("en") and "something" not in stopwords("en")
    # a language without a gloss list keeps its function words
    assert stopwords("de") and not gloss_stopwords("de")
    assert gloss_words("die Bäume", "de")[0] == "der"


def test_gloss_stop_word_files_sit_beside_the_function_words() -> None:
    gloss = STOPWORDS.joinpath("gloss")
    files = sorted(f.name for f in gloss.iterdir() if f.name.endswith(".txt"))
    assert files == ["en.txt", "es.txt", "fr.txt", "he.txt"]
    assert "## `gloss/<lang>.txt`" in STOPWORDS.joinpath("README.md").read_text(encoding="utf-8")
    for name in files:
        lang = name.removesuffix(".txt")
        assert STOPWORDS.joinpath(name).is_file(), f"gloss/{name} has no function-word list beside it"
        words = gloss_stopwords(lang)
        assert words and all(len(w) >= 2 and " " not in w for w in words), name


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_lemmatiser_and_tokeniser_patterns_live_only_in_text() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if PACKAGE / "text" not in p.parents]
    assert outside
    lemmatising = [str(p) for p in outside if any(m.split(".")[0] == "simplemma" for m in _imports(p))]
    assert lemmatising == []
    patterns = ("\\w+", "[^\\W\\d_](?:", "\\w{_MARKS}")
    tokenising = [str(p) for p in outside if any(x in p.read_text(encoding="utf-8") for x in patterns)]
    assert tokenising == []


def test_the_face_lists_real_names_of_every_module() -> None:
    doc = kg_rag.text.__doc__ or ""
    rows = re.findall(r"^:mod:`\.(\w+)`(.*?)(?=^\S)", doc, re.M | re.S)
    modules = sorted(p.stem for p in (PACKAGE / "text").glob("*.py") if p.stem != "__init__")
    assert sorted(m for m, _ in rows) == modules
    for module, cell in rows:
        mod = importlib.import_module(f"kg_rag.text.{module}")
        names = re.findall(r"``(\w+)``", cell)
        assert names, module
        missing = [n for n in names if not hasattr(mod, n)]
        assert missing == [], (module, missing)


def test_importing_the_package_loads_no_tables() -> None:
    code = ("import sys, kg_rag.text; print(sorted(m for m in sys.modules if m in "
            "('simplemma', 'kg_rag.text.tokenise', 'kg_rag.text.analyse', 'kg_rag.text.langid')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
