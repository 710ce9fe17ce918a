# breaks: a TextPositionSelector with start = end (the quote no longer matches either)
# expect: kgrsh:TextPositionSelector-start kgrsh:Target-quoteMatchesText
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a2#pos> oa:start ?s } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/ann/a2#pos> oa:start 29 } }
