"""Text analysis shared by every stage — the only place where text is normalised, cut into words,
lemmatised or filtered by stop words.

==================  =====================================================================
module              public names
==================  =====================================================================
:mod:`.normalise`   ``nfc``, ``match_key``, ``base_language``, ``strip_niqqud``, ``strip_bidi``,
                    ``is_rtl``, ``for_terminal`` (also importable from here); the character
                    classes ``NIQQUD_CHARS``, ``HARAKAT_CHARS``, ``TATWEEL``, ``BIDI_CHARS``,
                    ``HEBREW_LETTERS`` and ``QUOTE_FOLDS``
:mod:`.tokenise`    one tokeniser per purpose: ``normalise`` → ``Normalised`` with ``WORD`` /
                    ``NON_WORD`` (the annotator's words, with offsets back to the text);
                    ``gloss_tokens`` / ``GLOSS_WORD`` (gloss words); ``english_tokens`` /
                    ``ENGLISH_TOKEN`` (English tokens around a mention)
:mod:`.analyse`     ``lemmas`` and ``lemma`` (the one simplemma wrapper), ``stopwords``,
                    ``analyses``, ``fallback_forms``, ``clean_surface``, ``how_rank``,
                    ``HOW_ORDER``, ``lemma_at``; ``gloss_words`` (content-word lemmas for gloss overlap) and
                    ``gloss_stopwords``
:mod:`.lemmatiser`  ``lemmatize``: simplemma's, its dictionaries kept decoded under the cache
                    folder (``CachedDictionaryFactory``, ``SortedDictionary``)
:mod:`.gloss_cache`  the gloss words already lemmatised, kept under the cache folder between
                    processes: ``opened``, ``GlossCache``, ``cache_path``, ``digest``, ``MISSING``
:mod:`.blobfile`    ``read_parts``, ``write_parts``: the file layout of the two above;
                   ``Entries``: a sorted NUL-separated part read without an object per entry
:mod:`.hebrew`      ``PREFIXES``, ``prefix_splits``, ``suffix_guesses``, ``final_form``,
                    ``is_hebrew_word``, ``MIN_STEM``
:mod:`.arabic`      ``PREFIXES``, ``prefix_splits``, ``MIN_STEM`` (the article and the
                    proclitics before it)
:mod:`.hebrew_affixes`  ``split_affixes`` (where a known lemma sits in a word: prefix, stem,
                    suffix)
:mod:`.english`     ``before``, ``after``, ``skippable``, ``WINDOW`` and the closed word classes
                    ``ADVERBS``, ``PREPOSITIONS``, ``DETERMINERS``, ``OBJECT_PRONOUNS``, ``QUOTES``
:mod:`.langid`      ``detect``, ``detect_scored``, ``check_language``, ``segments``,
                    ``paragraphs``, ``script_of``, ``language_scores``, ``SUPPORTED``,
                    ``MIN_LETTERS``, ``MIN_CONFIDENCE``
:mod:`.encoder`     ``load``, ``folder``, ``TokenEncoder`` (a small English encoder's word-piece
                    vectors, numpy only), ``span_vector``, ``WINDOW``
:mod:`.focus`       ``focus_span`` (the offsets of the word a question is about, named by the
                    word: ``bank#2``)
``stopwords/``      ``<lang>.txt`` function words, ``gloss/<lang>.txt`` gloss stop words (README)
==================  =====================================================================

Only the normalisation functions are imported here, so ``import kg_rag.text`` stays cheap: the
other modules are imported where they are used, and the lemma tables and the language classifier
load when first needed.
"""

from __future__ import annotations

from kg_rag.text.normalise import (
    base_language,
    for_terminal,
    is_rtl,
    match_key,
    nfc,
    strip_bidi,
    strip_niqqud,
)

__all__ = ["base_language", "for_terminal", "is_rtl", "match_key", "nfc", "strip_bidi", "strip_niqqud"]
