"""OASIS DMLex 1.0 (Committee Specification 01, 2024) XML and JSON → OntoLex-Lemon, vartrans, lexicog.

The two serialisations are read into the same objects (:mod:`loaders.dmlex_xml`,
:mod:`loaders.dmlex_json`) and mapped here (ontology/DATA-MODEL.md, "DMLex"):

* ``lexicographicResource`` → a ``lime:Lexicon`` ``…/id/dmlex/<key>`` (``<key>``: its ``uri``
  without the scheme, else the file name without ``.dmlex.xml``) with ``lime:language`` =
  ``langCode``;
* ``entry`` → ``ontolex:LexicalEntry`` ``…/id/dmlex/<key>/entry/<id>`` (the entry's ``id``, else
  its DMLex object id ``headword~pos~homographNumber``, §3.2.1.1); ``headword`` → the canonical
  form, ``inflectedForm`` → other forms (LexInfo features from the tag), ``partOfSpeech`` →
  ``lexinfo:partOfSpeech``;
* ``sense`` → ``ontolex:LexicalSense`` (``…/sense/<id>``, else ``…/entry/<id>/sense/<n>``),
  ``kgr:senseRank`` = its place in the entry, ``dct:identifier`` = its ``id``; ``definition`` →
  ``skos:definition`` in the resource's language, ``headwordExplanation`` → ``skos:definition``
  in its own, ``indicator`` → ``rdfs:label``, ``example`` (+ ``exampleTranslation``) →
  ``lexicog:usageExample [ rdf:value … ]``;
* ``label`` → ``lexinfo:usageNote`` (``lexinfo:register`` when its ``labelTag`` has
  ``typeTag="register"``): the tag, and the tag's description when there is one; an entry's labels
  apply to all its senses (§3.9) and are written on each. A label whose ``labelTag`` has
  ``typeTag="concept"`` is a link, not a note: its ``sameAs`` URIs are the sense's
  ``ontolex:reference`` (DMLex has no concept link of its own); a sense without one is a
  sense-only reading;
* ``headwordTranslation`` → a ``vartrans:Translation`` from the sense to a sense of an entry of
  the translation language (one entry per language and text, in the lexicon ``…/lexicon/<lang>``)
  that refers to the same concept, or to the translated sense itself when that has none.

Not mapped: pronunciations, etymology, relations (Linking Module), example sources, definition
types. Nothing is written until the whole file has been read and mapped.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, NoReturn

from pyoxigraph import Literal, NamedNode, Quad

from kg_rag.errors import LoadError
from kg_rag.namespaces import (
    DCT,
    ID,
    KGR,
    LEXICOG,
    LEXINFO,
    LIME,
    ONTOLEX,
    RDF,
    RDFS,
    SKOS,
    VARTRANS,
)
from kg_rag.text.normalise import nfc
from loaders import dmlex_json, dmlex_xml, rdf
from loaders.common import Parsed, peek
from loaders.dmlex_values import BY_VALUE, FEATURES, LEXINFO_NS, POS
from loaders.iris import file_stem, lang_tag, segment

log = logging.getLogger(__name__)

KIND = "dmlex"
MEDIA_TYPES = {"dmlex-xml": "application/x-dmlex+xml", "dmlex-json": "application/x-dmlex+json"}
#: ``typeTag`` of a ``labelTag`` whose ``sameAs`` names the sense's concept
CONCEPT_TYPE = "concept"

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# the XML declaration, comments, processing instructions and a DOCTYPE before the root element
_PROLOG = re.compile(rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>", re.S)
_FIRST_ELEMENT = re.compile(rb"<(?:[\w.-]+:)?([\w.-]+)")


def syntax_from_name(path: Path) -> str | None:
    """``dmlex-xml`` / ``dmlex-json`` for ``….dmlex.xml`` / ``….dmlex.json`` (gzipped too)."""
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".dmlex.xml"):
        return "dmlex-xml"
    if name.endswith(".dmlex.json"):
        return "dmlex-json"
    return None


def sniff(head: bytes) -> str | None:
    """``dmlex-xml`` / ``dmlex-json`` when these first bytes look like a DMLex document."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    root = _FIRST_ELEMENT.search(_PROLOG.sub(b"", text[:8192]))
    if root and root.group(1) == b"lexicographicResource":
        return "dmlex-xml"
    if text[:1] == b"{" and b'"@context"' not in text and (b'"langCode"' in text or b'"headword"' in text):
        return "dmlex-json"
    return None


def parse(path: Path, syntax: str, graph: NamedNode) -> Parsed:
    """Read and map the whole file (nothing written); ``syntax`` is ``dmlex-xml`` or ``dmlex-json``."""
    if not peek(path, 1):
        raise LoadError(f"{path}: empty file (0 bytes): not a DMLex document")
    resources = dmlex_xml.read(path) if syntax == "dmlex-xml" else dmlex_json.read(path)
    out: list[Quad] = []
    for n, res in enumerate(resources, 1):
        m = _Mapper(path, res, n if len(resources) > 1 else 0)
        m.run()
        out += m.out
    quads, counts, languages = rdf.complete(out, graph)
    return Parsed(kind=KIND, media_type=MEDIA_TYPES[syntax], quads=quads, triples=len(quads),
                  concepts=counts["concepts"], entries=counts["entries"], senses=counts["senses"],
                  entities=counts["entities"], languages=languages)


def object_id(parts: list[str]) -> str:
    """A DMLex object id from the values of its unique properties (§3.2.1.1, before IRI-encoding)."""
    out = []
    for v in parts:
        v = v.replace("\\", "\\\\").replace("~", "\\~").replace("_", "\\_").replace("0", "\\0")
        out.append(v or "0")
    return "~".join(out)


def _words(text: str) -> str:
    return nfc(" ".join(text.split()))


class _Mapper:
    def __init__(self, path: Path, res: dict[str, Any], number: int = 0) -> None:
        """``number``: the resource's place in a file of several (0: the only one)."""
        self.path = path
        self.res = res
        self.line = f"line {res['@jsonline']}: " if res.get("@jsonline") else ""
        self.out: list[Quad] = []
        self.lang = self.code(res, "(top level)", res.get("langCode"), "the lexicographicResource")
        self.tlangs = [self.code(res, "translationLanguages", c, "a translation language")
                       for c in res.get("translationLanguages", [])]
        self.label_tags = {t.get("tag"): t for t in res.get("labelTags", [])}
        self.pos_tags = {t.get("tag"): t for t in res.get("partOfSpeechTags", [])}
        self.form_tags = {t.get("tag"): t for t in res.get("inflectedFormTags", [])}
        uri = res.get("uri")
        key = _SCHEME.sub("", uri).strip("/") if uri else file_stem(path).removesuffix(".dmlex")
        if number and not uri:
            key += f"/{number}"
        self.lexicon = NamedNode(f"{ID}dmlex/" + "/".join(segment(x) for x in key.split("/") if x))
        self.base = f"{self.lexicon.value}/"
        self.seen: dict[str, str] = {}
        self.tr_entries: dict[tuple[str, str], tuple[NamedNode, set[str]]] = {}
        self.tr_lexicons: set[str] = set()
        self.unknown: dict[str, set[str]] = {"part-of-speech": set(), "inflected-form": set()}

    # --- helpers ---------------------------------------------------------------------------------
    def fail(self, obj: dict[str, Any], where: str, msg: str) -> NoReturn:
        at = (f"{self.path}:{obj['@line']}:{obj['@col']}" if "@line" in obj
              else f"{self.path}: {self.line}{where}")
        raise LoadError(f"{at}: {msg}")

    def code(self, obj: dict[str, Any], where: str, value: Any, what: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(obj, where, f"{what} lacks its langCode (an IETF language tag, required)")
        try:
            return lang_tag(value.strip())
        except ValueError as e:
            self.fail(obj, where, f"{what}: {e}")

    def text(self, obj: dict[str, Any], where: str, member: str, what: str) -> str:
        value = obj.get(member)
        if not isinstance(value, str) or not value.strip():
            self.fail(obj, where, f"{what} lacks its {member} (required)")
        return _words(value)

    def tlang(self, obj: dict[str, Any], where: str, what: str) -> str:
        if obj.get("langCode"):
            return self.code(obj, where, obj["langCode"], what)
        if len(self.tlangs) == 1:
            return self.tlangs[0]
        self.fail(obj, where, f"{what} has no langCode and the resource declares "
                              f"{len(self.tlangs)} translation languages; give its langCode")

    def add(self, s: NamedNode, p: NamedNode, o: NamedNode | Literal) -> None:
        self.out.append(Quad(s, p, o))

    def node(self, iri: str, obj: dict[str, Any], where: str, what: str) -> NamedNode:
        if iri in self.seen:
            self.fail(obj, where, f"{what} has the same identity as {self.seen[iri]} "
                                  f"(DMLex requires it to be unique)")
        self.seen[iri] = f"the {what} at {self.where(obj, where)}"
        return NamedNode(iri)

    def where(self, obj: dict[str, Any], where: str) -> str:
        return f"line {obj['@line']}" if "@line" in obj else where

    # --- the resource ----------------------------------------------------------------------------
    def run(self) -> None:
        lex, add = self.lexicon, self.add
        add(lex, RDF.type, LIME.Lexicon)
        add(lex, LIME.language, Literal(self.lang))
        add(lex, DCT.language, Literal(self.lang))
        if isinstance(self.res.get("title"), str) and self.res["title"].strip():
            add(lex, DCT.title, Literal(_words(self.res["title"])))
        if isinstance(self.res.get("uri"), str):
            add(lex, DCT.identifier, Literal(self.res["uri"].strip()))
        for tag, t in self.label_tags.items():
            if str(t.get("typeTag", "")).casefold() == CONCEPT_TYPE:
                for uri in t.get("sameAs", []):
                    self.iri(t, f"labelTags[{tag!r}]", uri)
        for i, e in enumerate(self.res.get("entries", [])):
            self.entry(e, f"entries[{i}]")
        for kind, tags in self.unknown.items():
            if tags:
                log.warning("%s: %s tags without a LexInfo mapping, not kept: %s", self.path, kind,
                            ", ".join(sorted(tags)[:20]))

    def iri(self, obj: dict[str, Any], where: str, uri: str) -> NamedNode:
        try:
            if not _SCHEME.match(uri.strip()) and not uri.strip().startswith("urn:"):
                raise ValueError
            return NamedNode(uri.strip())
        except ValueError:
            self.fail(obj, where, f"sameAs {uri!r} is not an absolute IRI")

    def entry(self, e: dict[str, Any], where: str) -> None:
        add = self.add
        headword = self.text(e, where, "headword", "an entry")
        pos_tags = [_words(p) for p in e.get("partsOfSpeech", [])]
        eid = e.get("id") or object_id([headword, "_".join(pos_tags), str(e.get("homographNumber", ""))])
        ent = self.node(f"{self.base}entry/{segment(str(eid))}", e, where, "entry")
        add(self.lexicon, LIME.entry, ent)
        add(ent, RDF.type, ONTOLEX.LexicalEntry)
        add(ent, RDF.type, ONTOLEX.MultiwordExpression if " " in headword else ONTOLEX.Word)
        self.forms(ent, headword, self.lang, e, where)
        for tag in pos_tags:
            p = self.pos(tag)
            if p is not None:
                add(ent, LEXINFO.partOfSpeech, p)
        notes = []
        for tag in e.get("labels", []):
            if self.concept_label(tag):
                self.fail(e, where, f"the label {tag!r} names a concept (typeTag {CONCEPT_TYPE!r}); "
                                    f"a concept label belongs on a sense")
            for p, o in self.notes(tag):
                add(ent, p, o)
                notes.append((p, o))
        for j, s in enumerate(e.get("senses", [])):
            self.sense(ent, j + 1, s, f"{where}.senses[{j}]", notes)

    def forms(self, ent: NamedNode, written: str, lang: str, obj: dict[str, Any], where: str,
              seen: set[str] | None = None) -> set[str]:
        """The canonical form (when ``seen`` is None) and the inflected forms of ``obj``; the
        written forms the entry has now."""
        add = self.add
        if seen is None:
            f = NamedNode(f"{ent.value}#lemma")
            add(ent, ONTOLEX.canonicalForm, f)
            add(f, RDF.type, ONTOLEX.Form)
            add(f, ONTOLEX.writtenRep, Literal(written, language=lang))
            seen = {written}
        for k, form in enumerate(obj.get("inflectedForms", [])):
            text = self.text(form, f"{where}.inflectedForms[{k}]", "text", "an inflected form")
            if text in seen:
                continue
            seen.add(text)
            f = NamedNode(f"{ent.value}#form{len(seen) - 1}")
            add(ent, ONTOLEX.otherForm, f)
            add(f, RDF.type, ONTOLEX.Form)
            add(f, ONTOLEX.writtenRep, Literal(text, language=lang))
            tag = form.get("tag")
            feature = self.feature(_words(tag)) if isinstance(tag, str) and tag.strip() else None
            if feature is not None:
                add(f, feature[0], feature[1])
        return seen

    def pos(self, tag: str) -> NamedNode | None:
        for uri in (self.pos_tags.get(tag) or {}).get("sameAs", []):
            for ns in LEXINFO_NS:
                if uri.startswith(ns):
                    return LEXINFO.term(uri[len(ns):])
            if "universaldependencies.org/u/pos/" in uri:
                tag = uri.rstrip("/").rsplit("/", 1)[-1]
        local = POS.get(tag.casefold())
        if local is None:
            self.unknown["part-of-speech"].add(tag)
            return None
        return LEXINFO.term(local)

    def feature(self, tag: str) -> tuple[NamedNode, NamedNode] | None:
        for uri in (self.form_tags.get(tag) or {}).get("sameAs", []):
            for ns in LEXINFO_NS:
                value = uri[len(ns):] if uri.startswith(ns) else ""
                if value in BY_VALUE:
                    return LEXINFO.term(BY_VALUE[value]), LEXINFO.term(value)
        hit = FEATURES.get(tag.casefold())
        if hit is None:
            self.unknown["inflected-form"].add(tag)
            return None
        return LEXINFO.term(hit[0]), LEXINFO.term(hit[1])

    def concept_label(self, tag: str) -> bool:
        t = self.label_tags.get(tag)
        return t is not None and str(t.get("typeTag", "")).casefold() == CONCEPT_TYPE

    def notes(self, tag: str) -> list[tuple[NamedNode, Literal]]:
        t = self.label_tags.get(tag) or {}
        pred = LEXINFO.register if str(t.get("typeTag", "")).casefold() == "register" else LEXINFO.usageNote
        texts = [_words(tag)]
        desc = t.get("description")
        if isinstance(desc, str) and desc.strip() and _words(desc) != texts[0]:
            texts.append(_words(desc))
        return [(pred, Literal(x)) for x in texts]

    # --- senses ----------------------------------------------------------------------------------
    def sense(self, ent: NamedNode, rank: int, s: dict[str, Any], where: str,
              entry_notes: list[tuple[NamedNode, Literal]]) -> None:
        add, lang = self.add, self.lang
        sid = s.get("id")
        iri = f"{self.base}sense/{segment(sid)}" if sid else f"{ent.value}/sense/{rank}"
        sense = self.node(iri, s, where, "sense")
        add(ent, ONTOLEX.sense, sense)
        add(sense, RDF.type, ONTOLEX.LexicalSense)
        add(sense, ONTOLEX.isSenseOf, ent)
        add(sense, KGR.senseRank, Literal(rank))
        if sid:
            add(sense, DCT.identifier, Literal(nfc(sid)))
        if isinstance(s.get("indicator"), str) and s["indicator"].strip():
            add(sense, RDFS.label, Literal(_words(s["indicator"]), language=lang))
        concepts: list[NamedNode] = []
        for p, o in entry_notes:
            add(sense, p, o)
        for tag in s.get("labels", []):
            if self.concept_label(tag):
                uris = self.label_tags[tag].get("sameAs", [])
                if not uris:
                    self.fail(s, where, f"the concept label {tag!r} has no sameAs URI in its labelTag")
                concepts += [self.iri(s, where, u) for u in uris]
                continue
            for p, o in self.notes(tag):
                add(sense, p, o)
        for c in dict.fromkeys(concepts):
            add(sense, ONTOLEX.reference, c)
        for k, d in enumerate(s.get("definitions", [])):
            text = self.text(d, f"{where}.definitions[{k}]", "text", "a definition")
            add(sense, SKOS.definition, Literal(text, language=lang))
        for k, x in enumerate(s.get("headwordExplanations", [])):
            w = f"{where}.headwordExplanations[{k}]"
            text = self.text(x, w, "text", "a headword explanation")
            add(sense, SKOS.definition, Literal(text, language=self.tlang(x, w, "a headword explanation")))
        for k, x in enumerate(s.get("examples", [])):
            self.example(sense, k + 1, x, f"{where}.examples[{k}]")
        for k, t in enumerate(s.get("headwordTranslations", [])):
            self.translation(sense, k + 1, t, f"{where}.headwordTranslations[{k}]",
                             list(dict.fromkeys(concepts)) or [sense])

    def example(self, sense: NamedNode, n: int, x: dict[str, Any], where: str) -> None:
        add = self.add
        ex = NamedNode(f"{sense.value}/example/{n}")
        add(sense, LEXICOG.usageExample, ex)
        add(ex, RDF.type, LEXICOG.UsageExample)
        add(ex, RDF.value, Literal(self.text(x, where, "text", "an example"), language=self.lang))
        for k, t in enumerate(x.get("exampleTranslations", [])):
            w = f"{where}.exampleTranslations[{k}]"
            text = self.text(t, w, "text", "an example translation")
            add(ex, RDF.value, Literal(text, language=self.tlang(t, w, "an example translation")))

    def translation(self, sense: NamedNode, n: int, t: dict[str, Any], where: str,
                    refers_to: list[NamedNode]) -> None:
        add = self.add
        text = self.text(t, where, "text", "a headword translation")
        tl = self.tlang(t, where, "a headword translation")
        hit = self.tr_entries.get((tl, text))
        if hit is None:
            lex = f"{self.base}lexicon/{segment(tl)}"
            if lex not in self.tr_lexicons:
                self.tr_lexicons.add(lex)
                add(NamedNode(lex), RDF.type, LIME.Lexicon)
                add(NamedNode(lex), LIME.language, Literal(tl))
            te = NamedNode(f"{self.base}translation/{segment(tl)}/{segment(text)}")
            add(NamedNode(lex), LIME.entry, te)
            add(te, RDF.type, ONTOLEX.LexicalEntry)
            add(te, RDF.type, ONTOLEX.MultiwordExpression if " " in text else ONTOLEX.Word)
            hit = self.tr_entries[(tl, text)] = (te, self.forms(te, text, tl, {}, where))
        te, seen = hit
        for tag in t.get("partsOfSpeech", []):
            p = self.pos(_words(tag))
            if p is not None:
                add(te, LEXINFO.partOfSpeech, p)
        self.forms(te, text, tl, t, where, seen)
        target = NamedNode(f"{sense.value}/translation/{n}")
        add(te, ONTOLEX.sense, target)
        add(target, RDF.type, ONTOLEX.LexicalSense)
        add(target, ONTOLEX.isSenseOf, te)
        for c in refers_to:
            add(target, ONTOLEX.reference, c)
        for tag in t.get("labels", []):
            for p, o in self.notes(tag):
                add(target, p, o)
        link = NamedNode(f"{sense.value}/translation/{n}#link")
        add(link, RDF.type, VARTRANS.Translation)
        add(link, VARTRANS.source, sense)
        add(link, VARTRANS.target, target)
