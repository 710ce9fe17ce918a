"""WordNet sense keys from Open English WordNet sense ids.

OEWN (2021+) writes a sense key into the XML id of each sense: ``oewn-bank__1.17.01..`` is
``bank%1:17:01::``. The lemma part escapes characters that are not allowed in an XML id; after
the lemma, ``__`` stands for ``%`` and ``.`` for ``:`` (and ``-sp-`` for ``_``, a space in the
head word of a satellite adjective).

Two escaping schemes exist:

* 2025 edition: ``-`` is doubled (``--``) and other characters become named escapes
  (``-apos-`` ``'``, ``-excl-`` ``!``, ``-colon-`` ``:`` …, HTML entity names);
* 2021–2024 editions: short escapes ``-ap-`` ``'`` ``-ex-`` ``!`` ``-cm-`` ``,`` ``-cn-`` ``:``
  ``-pl-`` ``+`` ``-sl-`` ``/`` ``-lb-`` ``(`` ``-rb-`` ``)`` ``-pc-`` ``%``, with ``-`` unescaped.

Decoding scans the lemma left to right, so an escape is never read across another one.
"""

from __future__ import annotations

import re

# 2025 edition (english-wordnet scripts: escape_sense_key / unescape_sense_key)
_NAMED = {
    "apos": "'", "colon": ":", "excl": "!", "num": "#", "dollar": "$", "percnt": "%",
    "amp": "&", "lpar": "(", "rpar": ")", "ast": "*", "plus": "+", "comma": ",", "sol": "/",
    "lbrace": "{", "vert": "|", "rbrace": "}", "tilde": "~", "cent": "\u00a2",
    "pound": "\u00a3", "sect": "\u00a7", "copy": "\u00a9", "reg": "\u00ae", "deg": "\u00b0",
    "acute": "\u00b4", "para": "\u00b6", "ordm": "\u00ba",
}
# 2021–2024 editions
_SHORT = {
    "ap": "'", "ex": "!", "cm": ",", "cn": ":", "pl": "+", "sl": "/", "lb": "(", "rb": ")",
    "pc": "%",
}
_NEW = re.compile("--|-(" + "|".join(sorted(_NAMED, key=len, reverse=True)) + ")-")
_OLD = re.compile("-(" + "|".join(sorted(_SHORT, key=len, reverse=True)) + ")-")
_ESCAPE_NEW = {v: f"-{k}-" for k, v in _NAMED.items()}


def _unescape_new(lemma: str) -> str:
    return _NEW.sub(lambda m: "-" if m.group(0) == "--" else _NAMED[m.group(1)], lemma)


def _unescape_old(lemma: str) -> str:
    return _OLD.sub(lambda m: _SHORT[m.group(1)], lemma)


def decode_sense_id(sense_id: str, lexicon_id: str = "oewn") -> str | None:
    """The WordNet sense key encoded in an OEWN sense id, or ``None`` if it encodes none.

    >>> decode_sense_id("oewn-bank__1.17.01..")
    'bank%1:17:01::'
    >>> decode_sense_id("oewn-.22--caliber__3.01.00..")
    '.22-caliber%3:01:00::'
    """
    prefix = lexicon_id + "-"
    if not sense_id.startswith(prefix):
        return None
    body = sense_id[len(prefix):]
    lemma, sep, rest = body.rpartition("__")  # the part after the lemma never holds "__"
    if not sep or not lemma:
        return None
    # the 2025 scheme doubles every '-'; a lone '-' means the older short escapes
    new_scheme = "--" in lemma or _NEW.search(lemma) is not None or _OLD.search(lemma) is None
    lemma = _unescape_new(lemma) if new_scheme else _unescape_old(lemma)
    return lemma + "%" + rest.replace("-sp-", "_").replace(".", ":")


def encode_sense_key(sense_key: str, lexicon_id: str = "oewn") -> str:
    """The 2025-edition OEWN sense id of a sense key (inverse of :func:`decode_sense_id`)."""
    lemma, _, rest = sense_key.rpartition("%")
    out = []
    for ch in lemma:
        if ch == "-":
            out.append("--")
        else:
            out.append(_ESCAPE_NEW.get(ch, ch))
    return f"{lexicon_id}-{''.join(out)}__{rest.replace('_', '-sp-').replace(':', '.')}"
