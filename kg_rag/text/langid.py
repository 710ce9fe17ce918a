"""Language identification: ISO 639-1 codes for texts and for the paragraphs of a document.

py3langid's bundled model (offline) restricted to :data:`SUPPORTED`, with script shortcuts
(a text written mostly in Hebrew letters is ``he``, in Arabic letters ``ar``) and a caller's
default for texts too short to tell.

::

    detect("הפירות העמיסו על הבדים")          # 'he'
    detect("ok", default="en")                  # 'en' (too short to tell)
    segments("Hello world, how are you?\\n\\nDie Früchte beugten die Zweige.")
    # [(0, 25, 'en'), (27, 57, 'de')]
    check_language("EN-gb")                     # 'en'
"""

from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.text.normalise import base_language, nfc

log = logging.getLogger(__name__)

#: the languages kg-rag detects and accepts (ISO 639-1)
SUPPORTED: tuple[str, ...] = (
    "ar", "ca", "cs", "da", "de", "el", "en", "es", "fa", "fi", "fr", "he", "hu", "it", "ja",
    "ko", "nl", "no", "pl", "pt", "ro", "ru", "sv", "tr", "uk", "zh",
)
_SUPPORTED_SET = frozenset(SUPPORTED)
#: aliases users type for a supported language
_ALIASES = {"iw": "he", "nb": "no", "nn": "no", "heb": "he", "eng": "en", "deu": "de", "ger": "de",
            "fra": "fr", "fre": "fr", "spa": "es", "ara": "ar"}

#: fewer letters than this and no script shortcut: the caller's default decides
MIN_LETTERS = 12
#: below this classifier confidence the caller's default decides (when one is given)
MIN_CONFIDENCE = 0.5

_HEBREW = re.compile("[\u05d0-\u05ea\ufb1d-\ufb4f]")
_ARABIC = re.compile("[\u0620-\u064a\u0671-\u06d3\ufb50-\ufdff\ufe70-\ufefc]")
_LETTER = re.compile(r"[^\W\d_]")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")

_lock = threading.Lock()
_identifier: Any = None


def check_language(code: str) -> str:
    """A user's language code as a supported ISO 639-1 code (``'EN-gb'`` → ``'en'``)."""
    base = base_language(code.strip()) if isinstance(code, str) else ""
    base = _ALIASES.get(base, base)
    if base not in _SUPPORTED_SET:
        raise InputError(
            f"unsupported language code {code!r}; use one of: {', '.join(SUPPORTED)}"
        )
    return base


def _classifier() -> Any:
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import LanguageIdentifier

            ptc, pc, classes, nextmove, row, output = _model()
            # the supported languages' columns only, as ``set_languages`` would take them: the
            # identifier keeps the model it is given, and the whole one (142 languages) is
            # 25 MB more of every process's memory
            keep = [i for i, c in enumerate(classes) if c in _SUPPORTED_SET]
            ident = LanguageIdentifier(ptc[:, keep], pc[keep], [classes[i] for i in keep], nextmove,
                                       output, norm_probs=True, tk_row=row)
            _identifier = ident
        return _identifier


def _model() -> tuple[Any, ...]:
    """py3langid's bundled model as ``LanguageIdentifier`` takes it. The model ships LZMA
    compressed (decompressing it is most of a second, in every new process), so it is kept
    uncompressed under ``Settings.cache_dir`` (flat arrays, no pickles) after the first use."""
    from importlib.metadata import version

    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, _load_model_file
    from py3langid.modelio import _to_array

    from kg_rag.settings import settings

    path = Path(settings().cache_dir) / f"langid-{version('py3langid')}-{Path(MODEL_FILE).name}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                return (z["ptc"], z["pc"], z["classes"].tolist(), _to_array(z["nextmove"]),
                        _to_array(z["row"]), z["output"].tolist())
        except (OSError, ValueError, KeyError) as e:
            log.warning("ignoring the unreadable language model cache %s (%s)", path, e)
    ptc, pc, classes, nextmove, row, output = _load_model_file(MODEL_DIR / MODEL_FILE)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")  # one per writer: processes may race
        np.savez(tmp, ptc=np.asarray(ptc), pc=np.asarray(pc), classes=np.asarray(classes),
                 nextmove=np.frombuffer(nextmove, dtype=f"u{nextmove.itemsize}"),
                 row=np.frombuffer(row, dtype=f"u{row.itemsize}"), output=np.asarray(output))
        os.replace(tmp, path)
    except OSError as e:
        log.warning("could not write the language model cache %s: %s", path, e)
    return np.asarray(ptc), np.asarray(pc), classes, nextmove, row, output


def _script_shortcut(text: str) -> tuple[str | None, int]:
    """(``he``/``ar`` when most letters are of that script, number of letters)."""
    letters = len(_LETTER.findall(text))
    if letters == 0:
        return None, 0
    he = len(_HEBREW.findall(text))
    if he * 2 > letters:
        return "he", letters
    ar = len(_ARABIC.findall(text))
    if ar * 2 > letters:
        return "ar", letters
    return None, letters


def script_of(text: str) -> tuple[str | None, int]:
    """(``he``/``ar`` when most letters of ``text`` are of that script, else None; how many
    letters it has)."""
    return _script_shortcut(nfc(text))


def language_scores(text: str) -> dict[str, float]:
    """The identifier's probability of each supported language for ``text`` (they sum to 1;
    spread thin over many languages for a word or two)."""
    return {str(lang): float(p) for lang, p in _classifier().rank(nfc(text))}


def detect_scored(text: str, default: str | None = None) -> tuple[str, float]:
    """(language, confidence in 0..1) — confidence 1.0 for a script shortcut, 0.0 for a default."""
    if default is not None:
        default = check_language(default)
    text = nfc(text)
    script, letters = _script_shortcut(text)
    if script is not None:
        return script, 1.0
    if letters < MIN_LETTERS and default is not None:
        return default, 0.0
    if letters == 0:
        raise InputError("cannot tell the language of a text without letters; give the language explicitly")
    lang, conf = _classifier().classify(text)
    if conf < MIN_CONFIDENCE and default is not None:
        log.debug("language guess %s (%.2f) below confidence, using default %s", lang, conf, default)
        return default, 0.0
    return str(lang), float(conf)


def detect(text: str, default: str | None = None) -> str:
    """The ISO 639-1 code of ``text``; ``default`` for texts too short or unclear to tell.

    Without a default, a text without any letters raises :class:`InputError`.
    """
    return detect_scored(text, default)[0]


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each blank-line separated paragraph, trimmed of surrounding whitespace."""
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _PARAGRAPH_BREAK.finditer(text):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    trimmed = []
    for s, e in out:
        chunk = text[s:e]
        lead = len(chunk) - len(chunk.lstrip())
        trail = len(chunk) - len(chunk.rstrip())
        if e - trail > s + lead:
            trimmed.append((s + lead, e - trail))
    return trimmed


def segments(text: str, default: str | None = None) -> list[tuple[int, int, str]]:
    """(start, end, language) per paragraph (blank-line separated) of an NFC ``text``.

    Offsets index ``text`` itself (pass NFC text). Paragraphs too short to tell take the
    language of the whole text (or ``default`` when the whole text cannot tell either).
    """
    spans = paragraphs(text)
    if not spans:
        return []
    whole = detect(text, default=default) if default is not None else _whole_or_none(text)
    out = []
    for s, e in spans:
        fallback = whole if whole is not None else default
        if fallback is None:
            out.append((s, e, detect(text[s:e])))
        else:
            out.append((s, e, detect(text[s:e], default=fallback)))
    return out


def _whole_or_none(text: str) -> str | None:
    script, letters = _script_shortcut(text)
    if script is not None:
        return script
    if letters == 0:
        return None
    return detect(text)


__all__ = ["MIN_CONFIDENCE", "MIN_LETTERS", "SUPPORTED", "check_language", "detect", "detect_scored",
           "language_scores", "paragraphs", "script_of", "segments"]
