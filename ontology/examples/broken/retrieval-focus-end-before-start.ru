# breaks: a retrieval's focus span ends before it starts
# expect: kgrsh:Retrieval-focusStart
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
DELETE { GRAPH ?g { ?r kgr:focusEnd ?e } }
INSERT { GRAPH ?g { ?r kgr:focusEnd 2 } }
WHERE { GRAPH ?g { ?r a kgr:Retrieval ; kgr:focusEnd ?e } }
