# breaks: a resolved decision with two chosen concepts
# expect: kgrsh:Decision-resolvedHasOneChoice kgrsh:DecisionShape|kgr:chosenConcept kgrsh:Annotation-bodyIsChosen
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d1> kgr:chosenConcept th:fabric } }
