# breaks: a passage whose start is not before its end
# expect: kgrsh:Passage-start
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/doc/fruit-trees#p0> kgr:start ?s } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/doc/fruit-trees#p0> kgr:start 29 } }
