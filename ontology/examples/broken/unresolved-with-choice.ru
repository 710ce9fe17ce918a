# breaks: an unresolved decision with a chosen concept
# expect: kgrsh:Decision-resolvedHasOneChoice
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d3> kgr:chosenConcept th:fabric } }
