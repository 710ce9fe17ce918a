# breaks: a decision with a single candidate (only ambiguous mentions are decided)
# expect: kgrsh:Decision-candidate
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d1> kgr:candidate <https://w3id.org/kg-rag/id/decision/d1#c2> } }
