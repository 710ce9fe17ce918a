"""simplemma's dictionaries kept decoded on disk give simplemma's own lemmas."""

from __future__ import annotations

from pathlib import Path

import pytest
import simplemma
from simplemma import Lemmatizer
from simplemma.strategies.default import DefaultStrategy
from simplemma.strategies.dictionaries.dictionary_factory import _load_dictionary_from_disk

from kg_rag.text import lemmatiser
from kg_rag.text.lemmatiser import CachedDictionaryFactory, SortedDictionary, cache_path


@pytest.mark.parametrize("lang", ["he", "fr"])
def test_every_entry_of_the_kept_dictionary_is_simplemmas(tmp_path: Path, lang: str) -> None:
    first = CachedDictionaryFactory(tmp_path).get_dictionary(lang)   # decodes and keeps it
    assert cache_path(lang, tmp_path).is_file()
    kept = CachedDictionaryFactory(tmp_path).get_dictionary(lang)    # reads what was kept
    assert isinstance(kept, SortedDictionary)
    original = _load_dictionary_from_disk(lang)
    assert len(kept) == len(first) == len(original)
    for k, v in original.items():
        assert kept.get(k.decode()) == v.decode()
    assert list(kept) == [k.decode() for k in original]
    assert kept.get("\u0000no such word") is None and kept.get("") is None
    assert kept.get(chr(0x10FFFF) * 3) is None     # past the last key


def test_lemmas_from_the_kept_dictionaries_are_simplemmas(tmp_path: Path) -> None:
    words = {"en": ["Branches", "branches", "ran", "mice", "don't", "well-known", "The", "zzzq"],
             "fr": ["chevaux", "l'arbre", "Mangeait", "aujourd'hui"],
             "es": ["árboles", "comiendo", "dámelo"],
             "he": ["הבדים", "והעצים", "ספרים"]}
    for _ in range(2):   # decoded, then read back
        ours = Lemmatizer(lemmatization_strategy=DefaultStrategy(
            dictionary_factory=CachedDictionaryFactory(tmp_path)))
        for lang, ws in words.items():
            for w in ws:
                assert ours.lemmatize(w, lang) == simplemma.lemmatize(w, lang=lang), (lang, w)


def test_an_unreadable_or_missing_cache_falls_back_to_decoding(tmp_path: Path) -> None:
    path = cache_path("he", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not an npz")
    d = CachedDictionaryFactory(tmp_path).get_dictionary("he")
    original = _load_dictionary_from_disk("he")
    assert len(d) == len(original)
    k, v = next(iter(original.items()))
    assert d.get(k.decode()) == v.decode()
    assert isinstance(CachedDictionaryFactory(tmp_path).get_dictionary("he"), SortedDictionary)
    with pytest.raises(ValueError):
        CachedDictionaryFactory(tmp_path).get_dictionary("xx")


def test_a_truncated_cache_is_decoded_again(tmp_path: Path) -> None:
    CachedDictionaryFactory(tmp_path).get_dictionary("he")
    path = cache_path("he", tmp_path)
    path.write_bytes(path.read_bytes()[:-3])
    assert lemmatiser.read_cached(path) is None
    d = CachedDictionaryFactory(tmp_path).get_dictionary("he")
    assert len(d) == len(_load_dictionary_from_disk("he"))
    assert lemmatiser.read_cached(path) is not None     # written whole again


def test_an_unwritable_cache_folder_still_lemmatises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    d = CachedDictionaryFactory(blocker / "sub").get_dictionary("he")   # mkdir fails: not kept
    assert len(d) == len(_load_dictionary_from_disk("he"))


def test_analyse_lemmatises_through_the_kept_dictionaries() -> None:
    assert lemmatiser.lemmatize("branches", "en") == simplemma.lemmatize("branches", lang="en")


def test_the_kept_dictionary_is_not_walked_by_the_garbage_collector(tmp_path: Path) -> None:
    import gc

    CachedDictionaryFactory(tmp_path).get_dictionary("he")
    kept = lemmatiser.read_cached(cache_path("he", tmp_path))
    assert kept is not None
    gc.collect()
    # a dictionary is two blobs (never tracked) and three flat arrays of numbers (one object
    # each): no container of an object per entry for the collector to walk
    assert not gc.is_tracked(kept._keys._blob) and not gc.is_tracked(kept._lemmas._blob)
    from array import array

    assert all(type(x) is array for x in (kept._keys._at, kept._lemmas._at, kept._which))
