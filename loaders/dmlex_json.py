"""DMLex 1.0 JSON (OASIS, Committee Specification 01, §5.2), read with the standard library.

The document is one ``lexicographicResource`` object, or several in JSON Lines (one a line); a
lone ``entry`` has no ``langCode`` and is refused. Every object is checked against the members DMLex
gives it: a member of the wrong JSON type, or a member DMLex does not define (``"senses"`` on the
resource, a typo), is an error naming its JSON path; members whose name contains ``:``
(``"x:note"``) are custom extensions (DMLex conformance 1.2) and skipped. Members of modules
kg-rag does not map (pronunciations, etymology, relations, annotation markers…) are accepted and
not read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kg_rag.errors import LoadError
from loaders.common import read_all

_ANY = "any"
_TAG = {"tag": "str", "description": "str", "typeTag": "str", "for": "str", "sameAs": "strs"}
_MARKERS = {"headwordMarkers": _ANY, "collocateMarkers": _ANY}
_SCHEMA: dict[str, dict[str, str]] = {
    "lexicographicResource": {
        "title": "str", "uri": "str", "langCode": "str", "entries": "objs:entry",
        "translationLanguages": "strs", "labelTags": "objs:tag", "partOfSpeechTags": "objs:tag",
        "inflectedFormTags": "objs:tag",
        **{k: _ANY for k in ("definitionTypeTags", "labelTypeTags", "sourceIdentityTags",
                             "transcriptionSchemeTags", "relations", "relationTypes",
                             "etymonLanguages", "etymonTypes")},
    },
    "entry": {"id": "str", "headword": "str", "homographNumber": "num", "partsOfSpeech": "strs",
              "labels": "strs", "pronunciations": _ANY, "inflectedForms": "objs:inflectedForm",
              "senses": "objs:sense", "placeholderMarkers": _ANY, "etymologies": _ANY},
    "inflectedForm": {"tag": "str", "text": "str", "labels": "strs", "pronunciations": _ANY},
    "sense": {"id": "str", "indicator": "str", "labels": "strs", "definitions": "objs:definition",
              "examples": "objs:example", "headwordExplanations": "objs:headwordExplanation",
              "headwordTranslations": "objs:headwordTranslation"},
    "definition": {"definitionType": "str", "text": "str", **_MARKERS},
    "example": {"sourceIdentity": "str", "sourceElaboration": "str", "soundFile": "str",
                "text": "str", "labels": "strs", "exampleTranslations": "objs:exampleTranslation",
                **_MARKERS},
    "exampleTranslation": {"langCode": "str", "text": "str", "labels": "strs", "soundFile": "str",
                           **_MARKERS},
    "headwordExplanation": {"langCode": "str", "text": "str"},
    "headwordTranslation": {"langCode": "str", "text": "str", "partsOfSpeech": "strs",
                            "labels": "strs", "pronunciations": _ANY,
                            "inflectedForms": "objs:inflectedForm", "placeholderMarkers": _ANY},
    "tag": _TAG,
}
_WHERE = {"senses": "an entry", "definitions": "a sense", "examples": "a sense",
          "headwordTranslations": "a sense", "inflectedForms": "an entry", "headword": "an entry"}


class _Bad(Exception):
    def __init__(self, where: str, msg: str) -> None:
        super().__init__(f"{where}: {msg}")


def _check(obj: Any, kind: str, where: str) -> None:
    if not isinstance(obj, dict):
        raise _Bad(where, f"a DMLex {kind} must be a JSON object, not {type(obj).__name__}")
    members = _SCHEMA[kind]
    for name, value in obj.items():
        if ":" in name:
            continue
        want = members.get(name)
        at = f"{where}.{name}" if where else name
        if want is None:
            hint = f"; {name} belongs in {_WHERE[name]}" if name in _WHERE else ""
            raise _Bad(where or "(top level)", f"{name!r} is not a member of a DMLex {kind}{hint}")
        if want == _ANY:
            continue
        if want == "str" and not isinstance(value, str):
            raise _Bad(at, f"must be a string, not {type(value).__name__}")
        if want == "num" and (isinstance(value, bool) or not isinstance(value, (int, str))):
            raise _Bad(at, f"must be a number or a string, not {type(value).__name__}")
        if want == "strs" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise _Bad(at, "must be an array of strings")
        if want.startswith("objs:"):
            if not isinstance(value, list):
                raise _Bad(at, "must be an array of objects")
            for i, item in enumerate(value):
                _check(item, want[5:], f"{at}[{i}]")


def read(path: Path) -> list[dict[str, Any]]:
    """The file's ``lexicographicResource`` — or resources, one a line (JSON Lines, §5.2) —
    checked; :class:`LoadError` with the line and column of a JSON syntax error or the JSON path
    of a structural one. A resource read from JSON Lines carries its line number as ``@jsonline``."""
    data = read_all(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise LoadError(f"{path}: not UTF-8 text (byte {e.start}); DMLex JSON is UTF-8") from None
    try:
        docs = [(0, json.loads(text))]
    except json.JSONDecodeError as e:
        if e.msg != "Extra data":
            raise LoadError(f"{path}:{e.lineno}:{e.colno}: not valid DMLex JSON: {e.msg}") from None
        docs = _lines(path, text)
    except RecursionError:
        raise LoadError(f"{path}: refused: the JSON is nested too deeply to be DMLex") from None
    out = []
    for n, doc in docs:
        at = f"line {n}: " if n else ""
        if isinstance(doc, dict) and "headword" in doc and "langCode" not in doc:
            raise LoadError(f"{path}: {at}refused: a lone entry, which has no langCode; wrap it in "
                            f"a lexicographicResource {{\"langCode\": …, \"entries\": [...]}}")
        try:
            _check(doc, "lexicographicResource", "")
        except _Bad as e:
            raise LoadError(f"{path}: {at}refused: {e}") from None
        out.append({**doc, "@jsonline": n} if n else doc)
    return out


def _lines(path: Path, text: str) -> list[tuple[int, Any]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise LoadError(f"{path}:{n}:{e.colno}: not valid DMLex JSON Lines: {e.msg}") from None
        except RecursionError:
            raise LoadError(f"{path}:{n}: refused: the JSON is nested too deeply to be DMLex") from None
    return out
