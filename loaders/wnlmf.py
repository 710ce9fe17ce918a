"""Global WordNet Association WN-LMF XML (``.xml`` / ``.xml.gz``) → OntoLex, streamed with expat.

Mapping (ontology/DATA-MODEL.md): ``LexicalEntry`` → ``ontolex:LexicalEntry`` with a canonical
form (the lemma) and other forms, lexinfo part of speech, ``kgr:matchKey`` per distinct key of
its forms, ``dct:language``; ``Sense`` → ``ontolex:LexicalSense`` (``ontolex:isSenseOf``,
``ontolex:isLexicalizedSenseOf`` the synset's concept, ``kgr:senseRank`` = position in the
entry, ``dct:identifier``, ``kgr:senseKey``); ``Synset`` → a ``skos:Concept`` /
``ontolex:LexicalConcept``: the ILI node ``http://globalwordnet.org/ili/iNNN`` when the synset has
an ILI id, else ``…/id/wn/<lexicon>/<synset>``. Relations become ``wn:<relType>``.
``SyntacticBehaviour`` → a ``synsem:SyntacticFrame`` ``…/id/wn/<lexicon>/frame-<id>`` with its
``rdfs:label`` (``"Somebody ----s something"@en``) and ``dct:identifier``; a sense's ``subcat``
ids (or a WN-LMF 1.0 entry-level behaviour's ``senses``) → ``kgr:subcat`` from the sense and
``synsem:synBehavior`` from its entry.

The document type may name an external DTD (never fetched); an internal subset or any entity
declaration is refused before it is read (entity expansion bombs).
"""

from __future__ import annotations

import gzip
import logging
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TextIO
from xml.parsers import expat

from pyoxigraph import NamedNode

from kg_rag.errors import LoadError
from kg_rag.namespaces import DCT, ID, ILI, KGR, LEXINFO, ONTOLEX, RDF, RDFS, SKOS, SYNSEM, WN
from kg_rag.text.normalise import base_language, match_key, nfc
from loaders.common import (
    Parsed,
    Spool,
    XmlCaps,
    XmlLimitExceeded,
    limits,
    nt_integer,
    nt_literal,
    open_binary,
    over_limit,
)
from loaders.iris import lang_tag, segment
from loaders.sensekeys import decode_sense_id

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/x-wn-lmf+xml"


def _t(node: NamedNode) -> str:
    return str(node)  # N-Triples text <…>


POS = {
    "n": _t(LEXINFO.noun), "v": _t(LEXINFO.verb), "a": _t(LEXINFO.adjective),
    "s": _t(LEXINFO.adjective), "r": _t(LEXINFO.adverb), "c": _t(LEXINFO.conjunction),
    "p": _t(LEXINFO.adposition),
}
_TYPE, _CANON, _OTHER = _t(RDF.type), _t(ONTOLEX.canonicalForm), _t(ONTOLEX.otherForm)
_WREP, _SENSE = _t(ONTOLEX.writtenRep), _t(ONTOLEX.sense)
_ENTRY, _FORM, _LSENSE = _t(ONTOLEX.LexicalEntry), _t(ONTOLEX.Form), _t(ONTOLEX.LexicalSense)
_CONCEPT, _LCONCEPT = _t(SKOS.Concept), _t(ONTOLEX.LexicalConcept)
_POS, _LANG, _MKEY, _IDENT = _t(LEXINFO.partOfSpeech), _t(DCT.language), _t(KGR.matchKey), _t(DCT.identifier)
_SENSE_OF, _LEXICALIZED = _t(ONTOLEX.isSenseOf), _t(ONTOLEX.isLexicalizedSenseOf)
_RANK, _SKEY = _t(KGR.senseRank), _t(KGR.senseKey)
_DEF, _EX, _ILI = _t(SKOS.definition), _t(SKOS.example), _t(KGR.ili)
_FRAME, _LABEL, _SUBCAT, _BEHAVIOR = (_t(SYNSEM.SyntacticFrame), _t(RDFS.label), _t(KGR.subcat),
                                      _t(SYNSEM.synBehavior))


class _Mapper:
    """expat callbacks writing N-Triples lines; references to synsets are resolved at the end.

    Terms are kept as N-Triples text (``<iri>``, ``"lit"@lang``)."""

    def __init__(self, spool: Spool, path: Path) -> None:
        self.out = spool
        self.add = spool.add
        self.path = path
        self.rel: dict[str, str] = {}
        self.ranks: dict[int, str] = {}
        self.lex_id = ""
        self.lex_base = ""
        self.lang = ""
        self.base = ""
        self.lang_lit = ""
        self.entry: str | None = None
        self.entry_keys: set[str] = set()
        self.n_forms = 0
        self.rank = 0
        self.sense: str | None = None
        self.concept: str | None = None
        self.text_tag: str | None = None    # Definition / Example being read
        self.text_lang = ""
        self.buf: list[str] = []
        self.texts: set[tuple[str, str, str]] = set()   # definitions/examples written (per synset)
        # deferred (synset ids are known only after all entries)
        self.sense_synset: list[tuple[str, str]] = []
        self.synset_rels: list[tuple[str, str, str]] = []
        self.sense_rels: list[tuple[str, str, str]] = []
        self.concept_of: dict[str, str] = {}
        self.sense_of: dict[str, str] = {}
        self.languages: set[str] = set()
        self.entries = self.senses = self.forms = 0
        self.frames: dict[str, str] = {}          # frame id or (LMF 1.0) label → frame node
        self.entry_frames: set[tuple[str, str]] = set()
        self.unnamed = 0

    # --- helpers -----------------------------------------------------------------------------
    def node(self, local_id: str) -> str:
        """``<…/id/wn/<lexicon>/<id>>``; XML ids need no escaping beyond :func:`segment`."""
        return f"<{self.lex_base}{segment(local_id)}>"

    def relation(self, a: dict[str, str]) -> str:
        """``wn:<relType>``; for relType "other" the specific ``dc:type`` when given."""
        name = a["relType"]
        if name == "other" and a.get("dc:type"):
            name = a["dc:type"]
        p = self.rel.get(name)
        if p is None:
            p = self.rel[name] = _t(WN.term(segment(name)))
        return p

    def rank_literal(self, n: int) -> str:
        lit = self.ranks.get(n)
        if lit is None:
            lit = self.ranks[n] = nt_integer(n)
        return lit

    def form(self, entry: str, written: str, pred: str, suffix: str) -> None:
        f = f"{entry[:-1]}#{suffix}>"
        self.forms += 1
        text = nfc(written)
        add = self.add
        add(entry, pred, f)
        add(f, _TYPE, _FORM)
        add(f, _WREP, nt_literal(text, self.lang))
        key = match_key(text)
        if key and key not in self.entry_keys:
            self.entry_keys.add(key)
            add(entry, _MKEY, nt_literal(key, self.base))

    # --- expat callbacks -----------------------------------------------------------------------
    def start(self, tag: str, a: dict[str, str]) -> None:
        if tag == "Sense" and self.entry is not None:
            self.sense_start(a)
        elif tag == "SynsetRelation" and self.concept is not None:
            self.synset_rels.append((self.concept, self.relation(a), a["target"]))
        elif tag == "SenseRelation" and self.sense is not None:
            self.sense_rels.append((self.sense, self.relation(a), a["target"]))
        elif tag == "LexicalEntry":
            e = self.entry = self.node(a["id"])
            self.entry_keys = set()
            self.n_forms = 0
            self.rank = 0
            self.entries += 1
            self.add(e, _TYPE, _ENTRY)
            self.add(e, _LANG, self.lang_lit)
        elif tag == "Lemma" and self.entry is not None:
            self.form(self.entry, a["writtenForm"], _CANON, "lemma")
            pos = POS.get(a.get("partOfSpeech", ""))
            if pos is not None:
                self.add(self.entry, _POS, pos)
        elif tag == "Form" and self.entry is not None:
            self.n_forms += 1
            self.form(self.entry, a["writtenForm"], _OTHER, f"form{self.n_forms}")
        elif tag == "Synset":
            self.synset_start(a)
        elif tag == "SyntacticBehaviour":
            self.frame_start(a)
        elif tag in ("Definition", "Example") and (self.concept or self.sense) is not None:
            self.text_tag = tag
            self.text_lang = lang_tag(a.get("language")) or self.lang
            self.buf = []
        elif tag in ("Lexicon", "LexiconExtension"):
            self.lex_id = a["id"]
            self.lex_base = f"{ID}wn/{segment(self.lex_id)}/"
            self.lang = lang_tag(a.get("language")) or "und"
            self.base = base_language(self.lang)
            self.lang_lit = nt_literal(self.lang)
            self.languages.add(self.base)

    def sense_start(self, a: dict[str, str]) -> None:
        assert self.entry is not None
        sid = a["id"]
        s = self.sense = self.node(sid)
        self.sense_of[sid] = s
        self.rank += 1
        self.senses += 1
        add = self.add
        add(self.entry, _SENSE, s)
        add(s, _TYPE, _LSENSE)
        add(s, _SENSE_OF, self.entry)
        add(s, _RANK, self.rank_literal(self.rank))
        add(s, _IDENT, nt_literal(nfc(sid)))
        key = a.get("dc:identifier")
        if not key or "%" not in key:
            key = decode_sense_id(sid, self.lex_id)
        if key:
            add(s, _SKEY, nt_literal(nfc(key)))
        self.sense_synset.append((s, a["synset"]))
        for fid in a.get("subcat", "").split():
            self.subcat(s, self.entry, self.frame_node(fid))

    def frame_node(self, fid: str) -> str:
        f = self.frames.get(fid)
        if f is None:
            f = self.frames[fid] = self.node(f"frame-{fid}")
            self.add(f, _TYPE, _FRAME)
            self.add(f, _IDENT, nt_literal(nfc(fid)))
        return f

    def subcat(self, sense: str, entry: str, frame: str) -> None:
        self.add(sense, _SUBCAT, frame)
        if (entry, frame) not in self.entry_frames:
            self.entry_frames.add((entry, frame))
            self.add(entry, _BEHAVIOR, frame)

    def frame_start(self, a: dict[str, str]) -> None:
        """A subcategorisation frame: lexicon-level with an id (LMF 1.1+; senses name it by
        ``subcat``) or entry-level naming its ``senses`` (LMF 1.0; the label is its identity)."""
        label = nfc(a.get("subcategorizationFrame", "").strip())
        if not label:
            return
        fid = a.get("id")
        if fid:
            self.add(self.frame_node(fid), _LABEL, nt_literal(label, "en"))
            return
        f = self.frames.get(label)
        if f is None:
            self.unnamed += 1
            f = self.frames[label] = self.frame_node(str(self.unnamed))
            self.add(f, _LABEL, nt_literal(label, "en"))
        if self.entry is not None:
            for sid in a.get("senses", "").split():
                self.subcat(self.node(sid), self.entry, f)

    def synset_start(self, a: dict[str, str]) -> None:
        sid = a["id"]
        ili = a.get("ili", "").strip()
        if ili and ili != "in":
            c = _t(ILI.term(segment(ili)))
        else:
            c = self.node(sid)
            ili = ""
        self.concept = c
        self.texts = set()
        self.concept_of[sid] = c
        add = self.add
        add(c, _TYPE, _CONCEPT)
        add(c, _TYPE, _LCONCEPT)
        add(c, _IDENT, nt_literal(nfc(sid)))
        if ili:
            add(c, _ILI, nt_literal(ili))
        pos = POS.get(a.get("partOfSpeech", ""))
        if pos is not None:
            add(c, _POS, pos)

    def end(self, tag: str) -> None:
        if self.text_tag == tag:
            text = nfc(" ".join("".join(self.buf).split()))
            # on the synset's concept; an Example inside a Sense is the sense's (LMF 1.1+)
            owner = self.concept or self.sense
            if text and owner is not None and (owner, tag, text) not in self.texts:
                self.texts.add((owner, tag, text))
                self.add(owner, _DEF if tag == "Definition" else _EX, nt_literal(text, self.text_lang))
            self.text_tag = None
        elif tag == "Sense":
            self.sense = None
        elif tag == "LexicalEntry":
            self.entry = None
        elif tag == "Synset":
            self.concept = None

    def chars(self, data: str) -> None:
        if self.text_tag is not None:
            self.buf.append(data)

    def doctype(self, name: str, sysid: str | None, pubid: str | None, internal: int) -> None:
        if internal:
            raise _Refused("an internal DTD subset (entity declarations are not accepted)")

    def entity(self, name: str, *rest: object) -> None:
        raise _Refused(f"an entity declaration ({name})")

    # --- end of file ---------------------------------------------------------------------------
    def resolve(self) -> None:
        """Add the triples that point at synsets or senses by id, now that all ids are known."""
        concept_of, add = self.concept_of, self.add
        for s, synset in self.sense_synset:
            c = concept_of.get(synset)
            if c is None:
                c = self.node(synset)
                log.warning("%s: sense %s names synset %s, which is not in the file",
                            self.path, s, synset)
            add(s, _LEXICALIZED, c)
        # WN-LMF files repeat some relations (same type and target): write each once
        self.synset_rels = list(dict.fromkeys(self.synset_rels))
        self.sense_rels = list(dict.fromkeys(self.sense_rels))
        for c, p, target in self.synset_rels:
            add(c, p, concept_of.get(target) or self.node(target))
        for s, p, target in self.sense_rels:
            add(s, p, self.sense_of.get(target) or concept_of.get(target) or self.node(target))


class _Refused(Exception):
    pass


def is_lmf(head: bytes) -> bool:
    """Whether these first bytes of a file are a WN-LMF document (root ``LexicalResource``)."""
    return b"<LexicalResource" in head


def parse(path: Path, progress: Callable[[int], None] | None = None,
          stream: TextIO | None = None) -> Parsed:
    """Map the whole file to N-Triples in a spool file (or into ``stream``, as they are mapped:
    the result's ``ntriples`` is then None); nothing is written to a store.

    ``progress`` is called with the number of triples mapped, as the file is read."""
    spool = Spool(stream)
    try:
        m = _read(path, spool, progress)
        spool.close()
    except BaseException:
        spool.abort()
        raise
    return Parsed(kind="wn-lmf", media_type=MEDIA_TYPE, ntriples=spool.path, triples=spool.count,
                  concepts=len(m.concept_of), entries=m.entries, senses=m.senses,
                  entities=len(set(m.concept_of.values())) + m.entries + m.senses + m.forms,
                  languages=m.languages)


def _read(path: Path, spool: Spool, progress: Callable[[int], None] | None) -> _Mapper:
    m = _Mapper(spool, path)
    p = expat.ParserCreate()
    p.buffer_text = True
    p.buffer_size = 1 << 16
    p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    p.StartDoctypeDeclHandler = m.doctype
    p.EntityDeclHandler = m.entity
    p.StartElementHandler = m.start
    p.EndElementHandler = m.end
    p.CharacterDataHandler = m.chars
    XmlCaps(limits()).install(p)
    chunk = 1 << 20
    done = 0
    with open_binary(path) as f:
        try:
            while True:
                data = f.read(chunk)
                p.Parse(data, not data)
                if progress:
                    progress(spool.pending - done)
                    done = spool.pending
                if not data:
                    break
        except expat.ExpatError as e:
            raise LoadError(f"{path}:{e.lineno}: not well-formed WN-LMF XML: "
                            f"{expat.ErrorString(e.code)}") from None
        except _Refused as e:
            raise LoadError(f"{path}:{p.CurrentLineNumber}: refused: the XML has {e}") from None
        except XmlLimitExceeded as e:
            raise over_limit(path, e.what, e.setting, f":{p.CurrentLineNumber}") from None
        except KeyError as e:
            raise LoadError(f"{path}:{p.CurrentLineNumber}: a WN-LMF element lacks the required "
                            f"attribute {e}") from None
        except ValueError as e:
            raise LoadError(f"{path}:{p.CurrentLineNumber}: {e}") from None
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise LoadError(f"{path}: truncated or corrupt gzip data ({e}); fetch the file again") from None
    if not m.lex_id:
        raise LoadError(f"{path}: no <Lexicon> element: not a WN-LMF lexicon")
    m.resolve()
    if progress:
        progress(spool.pending - done)
    return m
