# breaks: an LLM decision whose token count is a string
# expect: kgrsh:Decision-tokensIn
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d2> kgr:tokensIn ?n } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d2> kgr:tokensIn "512" } }
