"""IRIs of the vocabularies kg-rag reads and writes, as pyoxigraph terms."""

from __future__ import annotations

from pyoxigraph import NamedNode

#: terms a namespace keeps made (per namespace; the code names a few dozen)
MAX_TERMS = 1_000


class Namespace(str):
    def __getattr__(self, name: str) -> NamedNode:
        if name.startswith("__"):
            raise AttributeError(name)
        node = NamedNode(self + name)
        # kept as an attribute of the instance, where the next access to the term finds it without
        # calling __getattr__ (writing a document's decisions named a term a million times,
        # making a NamedNode each time); a NamedNode is immutable, so sharing one is safe
        if len(self.__dict__) < MAX_TERMS:
            self.__dict__[name] = node
        return node

    def term(self, name: str) -> NamedNode:
        return NamedNode(self + name)

    # str methods shadow __getattr__: terms named like one (dct:title, dct:format) win here
    title = property(lambda self: NamedNode(self + "title"))
    format = property(lambda self: NamedNode(self + "format"))


RDF = Namespace("http://www.w3.org/1999/02/22-rdf-syntax-ns#")
RDFS = Namespace("http://www.w3.org/2000/01/rdf-schema#")
XSD = Namespace("http://www.w3.org/2001/XMLSchema#")
SKOS = Namespace("http://www.w3.org/2004/02/skos/core#")
SKOSXL = Namespace("http://www.w3.org/2008/05/skos-xl#")
ONTOLEX = Namespace("http://www.w3.org/ns/lemon/ontolex#")
LIME = Namespace("http://www.w3.org/ns/lemon/lime#")
VARTRANS = Namespace("http://www.w3.org/ns/lemon/vartrans#")
LEXICOG = Namespace("http://www.w3.org/ns/lemon/lexicog#")
SYNSEM = Namespace("http://www.w3.org/ns/lemon/synsem#")
LEXINFO = Namespace("http://www.lexinfo.net/ontology/3.0/lexinfo#")
WN = Namespace("https://globalwordnet.github.io/schemas/wn#")
PROV = Namespace("http://www.w3.org/ns/prov#")
OA = Namespace("http://www.w3.org/ns/oa#")
DCT = Namespace("http://purl.org/dc/terms/")
DCAT = Namespace("http://www.w3.org/ns/dcat#")
VOID = Namespace("http://rdfs.org/ns/void#")
SH = Namespace("http://www.w3.org/ns/shacl#")

#: the project's own vocabulary (ontology/kgr.ttl)
KGR = Namespace("https://w3id.org/kg-rag/ns#")
#: IRIs minted by kg-rag for data (documents, annotations, decisions, sources)
ID = Namespace("https://w3id.org/kg-rag/id/")
#: Interlingual Index: concepts shared by wordnets of all languages
ILI = Namespace("http://globalwordnet.org/ili/")

DECISIONS_GRAPH = NamedNode(ID + "graph/decisions")

PREFIXES: dict[str, str] = {
    "rdf": str(RDF), "rdfs": str(RDFS), "xsd": str(XSD), "skos": str(SKOS), "skosxl": str(SKOSXL),
    "ontolex": str(ONTOLEX), "lime": str(LIME), "vartrans": str(VARTRANS), "lexicog": str(LEXICOG),
    "lexinfo": str(LEXINFO), "wn": str(WN), "prov": str(PROV), "oa": str(OA), "dct": str(DCT),
    "dcat": str(DCAT), "void": str(VOID), "kgr": str(KGR), "ili": str(ILI),
}
