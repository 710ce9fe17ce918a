"""DMLex 1.0 XML (OASIS, Committee Specification 01, §5.1) → the objects of its JSON serialisation.

The XML is read with expat (as WN-LMF is): a DTD internal subset or any entity declaration is
refused before it is read, no external entity or DTD is ever fetched. Elements are named without
a namespace or in ``http://docs.oasis-open.org/lexidma/ns/dmlex-1.0``; elements and attributes in
any other namespace are custom extensions (DMLex conformance 1.2) and skipped.

A document is one ``lexicographicResource``, or (§5.1) any other document element holding several.
The result has the shape of DMLex JSON ``lexicographicResource`` objects (§5.2: ``entries``,
``senses``, ``partsOfSpeech``, ``labels``, ``definitions``…), with every object also carrying
``@line`` / ``@col`` of its start tag, so that :mod:`loaders.dmlex` maps both serialisations with
one mapper and points errors at the place in the file. Text content follows §5.1.2: leading and
trailing whitespace removed, runs of whitespace one space; inline markers (``headwordMarker``,
``collocateMarker``, ``placeholderMarker``) keep their text.

Element and attribute names as in DMLex; an element DMLex does not allow where it stands (a
``<sense>`` outside an ``<entry>``, an unknown element) is an error, not silently dropped.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any
from xml.parsers import expat

from kg_rag.errors import LoadError
from loaders.common import XmlCaps, XmlLimitExceeded, limits, open_binary, over_limit

NS = "http://docs.oasis-open.org/lexidma/ns/dmlex-1.0"

# child element → (member of the JSON object, how): "obj" an object appended to a list, "text"
# the element's text as a string, "attr:<name>" the attribute appended to a list of strings,
# "skip" a DMLex element kg-rag does not map (its content is not read)
_TAGS = {"description": ("description", "text"), "sameAs": ("sameAs", "attr:uri")}
_SCHEMA: dict[str, dict[str, tuple[str, str]]] = {
    "lexicographicResource": {
        "title": ("title", "text"),
        "entry": ("entries", "obj"),
        "translationLanguage": ("translationLanguages", "attr:langCode"),
        "labelTag": ("labelTags", "obj"),
        "partOfSpeechTag": ("partOfSpeechTags", "obj"),
        "inflectedFormTag": ("inflectedFormTags", "obj"),
        **{k: ("", "skip") for k in ("definitionTypeTag", "labelTypeTag", "sourceIdentityTag",
                                     "transcriptionSchemeTag", "relation", "relationType",
                                     "etymonLanguage", "etymonType")},
    },
    "entry": {
        "headword": ("headword", "text"),
        "partOfSpeech": ("partsOfSpeech", "attr:tag"),
        "label": ("labels", "attr:tag"),
        "pronunciation": ("", "skip"),
        "inflectedForm": ("inflectedForms", "obj"),
        "sense": ("senses", "obj"),
        "etymology": ("", "skip"),
    },
    "inflectedForm": {"text": ("text", "text"), "label": ("labels", "attr:tag"),
                      "pronunciation": ("", "skip")},
    "sense": {
        "indicator": ("indicator", "text"),
        "label": ("labels", "attr:tag"),
        "definition": ("definitions", "obj"),
        "example": ("examples", "obj"),
        "headwordExplanation": ("headwordExplanations", "obj"),
        "headwordTranslation": ("headwordTranslations", "obj"),
    },
    "definition": {"text": ("text", "text")},
    "example": {"text": ("text", "text"), "label": ("labels", "attr:tag"),
                "exampleTranslation": ("exampleTranslations", "obj")},
    "exampleTranslation": {"text": ("text", "text"), "label": ("labels", "attr:tag")},
    "headwordExplanation": {"text": ("text", "text")},
    "headwordTranslation": {
        "text": ("text", "text"),
        "partOfSpeech": ("partsOfSpeech", "attr:tag"),
        "label": ("labels", "attr:tag"),
        "pronunciation": ("", "skip"),
        "inflectedForm": ("inflectedForms", "obj"),
    },
    "labelTag": _TAGS,
    "partOfSpeechTag": _TAGS,
    "inflectedFormTag": _TAGS,
}
#: inline markup allowed inside text (Annotation Module); a collocate marker may hold labels
_INLINE = {"headwordMarker", "collocateMarker", "placeholderMarker", "label"}
_WHERE = {"sense": "an <entry>", "entry": "the <lexicographicResource>",
          "definition": "a <sense>", "example": "a <sense>", "headwordTranslation": "a <sense>",
          "headwordExplanation": "a <sense>", "inflectedForm": "an <entry>",
          "exampleTranslation": "an <example>"}


class Refused(Exception):
    """The XML is well-formed but not a DMLex document kg-rag can read (message says why)."""


class _Frame:
    __slots__ = ("kind", "name", "obj", "key", "buf")

    def __init__(self, kind: str, name: str, obj: dict[str, Any] | None = None, key: str = "",
                 buf: list[str] | None = None) -> None:
        self.kind, self.name, self.obj, self.key, self.buf = kind, name, obj, key, buf


class _Reader:
    def __init__(self, parser: Any) -> None:
        self.p = parser
        self.stack: list[_Frame] = []
        self.resources: list[dict[str, Any]] = []
        self.text: _Frame | None = None      # the text-bearing element being read
        self.at = (1, 1)                     # line and column of the markup being handled

    def _here(self) -> dict[str, Any]:
        return {"@line": self.at[0], "@col": self.at[1]}

    def start(self, qname: str, attrs: dict[str, str]) -> None:
        self.at = (self.p.CurrentLineNumber, self.p.CurrentColumnNumber + 1)
        ns, _, name = qname.rpartition(" ")
        top = self.stack[-1] if self.stack else None
        own = {k: v for k, v in attrs.items() if " " not in k}   # namespaced attributes: extensions
        dmlex = not ns or ns == NS
        if top is None or top.kind == "wrapper":
            if dmlex and name == "entry":
                raise Refused("the document holds a lone <entry>, which has no langCode; wrap it in "
                              "<lexicographicResource langCode=\"…\">")
            if dmlex and name == "lexicographicResource":
                res = {**own, **self._here()}
                self.resources.append(res)
                self.stack.append(_Frame("obj", name, res))
            elif top is None:   # §5.1: any other document element holds lexicographicResources
                self.stack.append(_Frame("wrapper", name))
            else:
                raise Refused(f"<{name}> in the document element <{top.name}>, which may hold "
                              f"only <lexicographicResource> elements: not DMLex")
            return
        if not dmlex or top.kind == "skip":
            self.stack.append(_Frame("skip", name))
            return
        if top.kind == "text":
            if name not in _INLINE:
                raise Refused(f"<{name}> is not allowed inside <{top.name}> (only inline markers are)")
            self.stack.append(_Frame("skip-in-text", name))
            return
        if top.kind == "skip-in-text":
            self.stack.append(_Frame("skip-in-text", name))
            return
        assert top.obj is not None
        rule = _SCHEMA.get(top.name, {}).get(name)
        if rule is None:
            where = _WHERE.get(name)
            hint = f"; a <{name}> belongs in {where}" if where else ""
            raise Refused(f"<{name}> is not allowed in <{top.name}>{hint}")
        key, how = rule
        if how == "obj":
            obj = {**own, **self._here()}
            top.obj.setdefault(key, []).append(obj)
            self.stack.append(_Frame("obj", name, obj))
        elif how == "text":
            if key in top.obj:
                raise Refused(f"<{top.name}> has more than one <{name}>")
            frame = _Frame("text", name, top.obj, key, [])
            self.text = frame
            self.stack.append(frame)
        elif how.startswith("attr:"):
            attr = how[5:]
            if attr not in own:
                raise Refused(f"<{name}> lacks the required attribute {attr}")
            top.obj.setdefault(key, []).append(own[attr])
            self.stack.append(_Frame("skip", name))
        else:
            self.stack.append(_Frame("skip", name))

    def end(self, qname: str) -> None:
        frame = self.stack.pop()
        if frame.kind == "text":
            assert frame.obj is not None and frame.buf is not None
            frame.obj[frame.key] = " ".join("".join(frame.buf).split())
            self.text = None

    def chars(self, data: str) -> None:
        if self.text is not None and self.text.buf is not None:
            self.text.buf.append(data)

    def doctype(self, name: str, sysid: str | None, pubid: str | None, internal: int) -> None:
        self.at = (self.p.CurrentLineNumber, self.p.CurrentColumnNumber + 1)
        if internal:
            raise Refused("an internal DTD subset (entity declarations are not accepted)")

    def entity(self, name: str, *rest: object) -> None:
        self.at = (self.p.CurrentLineNumber, self.p.CurrentColumnNumber + 1)
        raise Refused(f"an entity declaration ({name}); entities are not accepted")


def read(path: Path) -> list[dict[str, Any]]:
    """The file's ``lexicographicResource`` (or, under another document element, resources, §5.1)
    as JSON-shaped objects; :class:`LoadError` with the line and column when the XML is not
    well-formed or not DMLex."""
    p = expat.ParserCreate(namespace_separator=" ")
    r = _Reader(p)
    p.buffer_text = True
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    p.StartDoctypeDeclHandler = r.doctype
    p.EntityDeclHandler = r.entity
    p.StartElementHandler = r.start
    p.EndElementHandler = r.end
    p.CharacterDataHandler = r.chars
    XmlCaps(limits()).install(p)
    with open_binary(path) as f:
        try:
            while True:
                data = f.read(1 << 20)
                p.Parse(data, not data)
                if not data:
                    break
        except expat.ExpatError as e:
            raise LoadError(f"{path}:{e.lineno}:{e.offset + 1}: not well-formed DMLex XML: "
                            f"{expat.ErrorString(e.code)}") from None
        except Refused as e:
            raise LoadError(f"{path}:{r.at[0]}:{r.at[1]}: refused: {e}") from None
        except XmlLimitExceeded as e:
            raise over_limit(path, e.what, e.setting, f":{p.CurrentLineNumber}") from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise LoadError(f"{path}: truncated or corrupt gzip data ({e}); fetch the file again") from None
    if not r.resources:
        raise LoadError(f"{path}: no <lexicographicResource> element: not DMLex")
    return r.resources
