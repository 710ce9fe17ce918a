# breaks: a retrieval's match mode is one the ranking does not have (the deleted body mode)
# expect: kgrsh:Retrieval-matchMode
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
DELETE { GRAPH ?g { ?r kgr:matchMode ?m } }
INSERT { GRAPH ?g { ?r kgr:matchMode "body" } }
WHERE { GRAPH ?g { ?r a kgr:Retrieval ; kgr:matchMode ?m } }
