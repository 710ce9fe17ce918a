# breaks: an annotation whose kgr:decision is not in the decisions graph
# expect: kgrsh:Annotation-decision
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a1> kgr:decision ?d } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/ann/a1> kgr:decision <https://w3id.org/kg-rag/id/decision/never-written> } }
