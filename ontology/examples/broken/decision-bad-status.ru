# breaks: a decision whose status is neither resolved nor unresolved
# expect: kgrsh:Decision-status
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d1> kgr:status ?s } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d1> kgr:status "maybe" } }
