# breaks: a decided annotation whose body is a rejected candidate
# expect: kgrsh:Annotation-bodyIsChosen
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a1> oa:hasBody ?b } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/ann/a1> oa:hasBody th:fabric } }
