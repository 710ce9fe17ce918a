# breaks: a decision whose chosen concept is none of its candidates' concepts
# expect: kgrsh:Decision-chosenIsCandidate kgrsh:Annotation-bodyIsChosen
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d1> kgr:chosenConcept ?c } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d1> kgr:chosenConcept th:tree } }
