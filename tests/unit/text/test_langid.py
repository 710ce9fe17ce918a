"""Language identification: script shortcuts, the restricted classifier, paragraphs, codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.errors import InputError
from kg_rag.text.langid import (
    SUPPORTED,
    check_language,
    detect,
    detect_scored,
    paragraphs,
    segments,
)

SENTENCES = {
    "he": "הפירות העמיסו על הבדים",
    "ar": "ذهب الولد إلى المدرسة في الصباح الباكر",
    "en": "The fruits weighed down the branches of the old trees in the garden.",
    "de": "Die Früchte beugten die Zweige der alten Bäume im Garten.",
    "fr": "Les fruits faisaient plier les branches des vieux arbres du jardin.",
    "es": "Los frutos doblaban las ramas de los viejos árboles del jardín.",
}


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_detect_each_language(lang: str) -> None:
    assert detect(SENTENCES[lang]) == lang


def test_script_shortcut_is_certain() -> None:
    assert detect_scored("גבר") == ("he", 1.0)
    assert detect_scored("הַגֶּבֶר קָרָא בְּקוֹל") == ("he", 1.0)
    assert detect_scored("كتاب") == ("ar", 1.0)
    # a Hebrew sentence with one Latin word is still Hebrew
    assert detect("הכנס של UNESCO בפריז") == "he"


def test_short_text_takes_the_default() -> None:
    assert detect("bank", default="de") == "de"
    assert detect("ok?", default="fr") == "fr"
    assert detect("12 34", default="es") == "es"
    with pytest.raises(InputError, match="without letters"):
        detect("12 34")
    with pytest.raises(InputError):
        detect("bank", default="klingon")


def test_segments_of_a_mixed_document() -> None:
    text = SENTENCES["en"] + "\n\n  \n" + SENTENCES["he"] + "\n\n" + SENTENCES["de"] + "\n"
    segs = segments(text)
    assert [lang for _, _, lang in segs] == ["en", "he", "de"]
    assert [text[s:e] for s, e, _ in segs] == [SENTENCES["en"], SENTENCES["he"], SENTENCES["de"]]


def test_short_paragraph_takes_the_document_language() -> None:
    text = "Garden\n\n" + SENTENCES["en"] + "\n\n" + SENTENCES["en"]
    assert [lang for _, _, lang in segments(text)] == ["en", "en", "en"]
    assert segments("") == [] and segments("\n\n \n") == []
    assert paragraphs("a\n\nb") == [(0, 1), (3, 4)]
    assert paragraphs("line one\nline two") == [(0, 17)]


def test_check_language() -> None:
    assert check_language("EN-gb") == "en"
    assert check_language("iw") == "he"
    assert check_language(" de ") == "de"
    assert {"en", "de", "fr", "es", "he", "ar"} <= set(SUPPORTED)
    with pytest.raises(InputError) as e:
        check_language("xx")
    assert "he" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError):
        check_language("")


def test_the_uncompressed_model_cache_gives_the_bundled_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model read back from the cache (written on first use) is the bundled one, array for
    array, and classifies alike."""
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier, _load_model_file

    from kg_rag.settings import settings
    from kg_rag.text import langid

    monkeypatch.setenv("KG_RAG_CACHE_DIR", str(tmp_path))
    settings.cache_clear()
    try:
        written = langid._model()                     # decompresses the bundled model, writes the cache
        assert list(tmp_path.glob("langid-*.npz"))
        read = langid._model()                        # from the cache
    finally:
        settings.cache_clear()
    bundled = _load_model_file(MODEL_DIR / MODEL_FILE)
    for a, b, c in zip(bundled, written, read, strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(c)) and np.array_equal(np.asarray(b), np.asarray(c))
    ptc, pc, classes, nextmove, row, output = read
    ident = LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=True, tk_row=row)
    ident.set_languages(list(langid.SUPPORTED))
    assert ident.classify("Les fruits alourdissaient les branches des arbres")[0] == "fr"
    assert ident.classify("The bank raised its interest rate again today")[0] == "en"


def test_the_identifier_holds_the_supported_languages_only_and_ranks_as_restricted() -> None:
    """Built from the supported languages' columns (not the whole 142-language model, 25 MB
    more per process): it ranks every text exactly as py3langid's identifier restricted by
    ``set_languages``."""
    from py3langid.langid import LanguageIdentifier

    from kg_rag.text import langid

    ptc, pc, classes, nextmove, row, output = langid._model()
    restricted = LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=True, tk_row=row)
    restricted.set_languages(list(langid.SUPPORTED))
    ours = langid._classifier()
    assert sorted(set(ours.nb_classes)) == sorted(langid.SUPPORTED)
    assert ours.nb_ptc.shape == (ptc.shape[0], len(ours.nb_classes)) < ptc.shape
    for text in ("Der Wasserhahn tropft seit gestern.", "El banco de la plaza está roto.",
                 "La banque ferme à midi.", "The river bank was muddy.", "שלום עולם", "",
                 "Il gatto dorme sul divano", "bank"):
        assert ours.rank(text) == restricted.rank(text)
