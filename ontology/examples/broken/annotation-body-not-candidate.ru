# breaks: an unambiguous annotation whose body is not its candidate concept
# expect: kgrsh:Annotation-bodyIsCandidate
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a2> oa:hasBody ?b } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/ann/a2> oa:hasBody th:fabric } }
