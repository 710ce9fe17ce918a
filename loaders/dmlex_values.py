"""DMLex controlled values → LexInfo: part-of-speech and inflected-form tags as dictionaries write
them (``n``, ``adj``, ``pl``, ``inf``…, also Universal Dependencies UPOS names), case-folded.

A ``partOfSpeechTag`` or ``inflectedFormTag`` whose ``sameAs`` is a LexInfo IRI wins over these
(:mod:`loaders.dmlex`); a tag found in neither is not kept.
"""

from __future__ import annotations

LEXINFO_NS = ("http://www.lexinfo.net/ontology/3.0/lexinfo#", "http://www.lexinfo.net/ontology/2.0/lexinfo#")
# part-of-speech tags (case-folded; also Universal Dependencies UPOS names) → LexInfo
POS = {
    **dict.fromkeys(("n", "noun", "subst", "substantive", "nn"), "noun"),
    **dict.fromkeys(("propn", "proper noun", "np", "prop"), "properNoun"),
    **dict.fromkeys(("v", "verb", "vb"), "verb"),
    **dict.fromkeys(("adj", "adjective", "a", "jj"), "adjective"),
    **dict.fromkeys(("adv", "adverb", "r", "rb"), "adverb"),
    **dict.fromkeys(("prep", "preposition"), "preposition"),
    "adp": "adposition", "adposition": "adposition",
    **dict.fromkeys(("conj", "conjunction", "cconj", "sconj"), "conjunction"),
    **dict.fromkeys(("pron", "pronoun"), "pronoun"),
    **dict.fromkeys(("num", "numeral"), "numeral"),
    **dict.fromkeys(("det", "determiner"), "determiner"),
    **dict.fromkeys(("art", "article"), "article"),
    **dict.fromkeys(("interj", "intj", "interjection"), "interjection"),
    **dict.fromkeys(("part", "particle"), "particle"),
}
# inflected-form tags (case-folded) → (LexInfo property, value)
FEATURES = {
    **dict.fromkeys(("pl", "plural", "plur"), ("number", "plural")),
    **dict.fromkeys(("sg", "singular", "sing"), ("number", "singular")),
    **dict.fromkeys(("du", "dual"), ("number", "dual")),
    **dict.fromkeys(("inf", "infinitive"), ("verbFormMood", "infinitive")),
    **dict.fromkeys(("imp", "imperative"), ("verbFormMood", "imperative")),
    **dict.fromkeys(("pres", "present", "prs"), ("tense", "present")),
    **dict.fromkeys(("past", "pst", "pret", "preterite"), ("tense", "past")),
    **dict.fromkeys(("fut", "future"), ("tense", "future")),
    **dict.fromkeys(("m", "masc", "masculine"), ("gender", "masculine")),
    **dict.fromkeys(("f", "fem", "feminine"), ("gender", "feminine")),
    **dict.fromkeys(("comp", "comparative"), ("degree", "comparative")),
    **dict.fromkeys(("sup", "superlative"), ("degree", "superlative")),
}
BY_VALUE = {value: prop for prop, value in FEATURES.values()}
