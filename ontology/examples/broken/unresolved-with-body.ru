# breaks: an annotation with an unresolved decision that still has a body
# expect: kgrsh:Annotation-bodyIsChosen
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/question/q1> { <https://w3id.org/kg-rag/id/ann/q1b> oa:hasBody th:fabric } }
