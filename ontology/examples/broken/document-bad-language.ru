# breaks: a document whose dct:language is not a language code
# expect: kgrsh:TextOwner-language
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/doc/fruit-trees> dct:language ?l } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/doc/fruit-trees> dct:language "Hebrew" } }
