# breaks: a resolved decision without a chosen concept
# expect: kgrsh:Decision-resolvedHasOneChoice
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d1> kgr:chosenConcept ?c } }
