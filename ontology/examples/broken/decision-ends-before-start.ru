# breaks: a decision that ended before it started
# expect: kgrsh:Decision-startedAtTime
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d1> prov:endedAtTime ?t } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { <https://w3id.org/kg-rag/id/decision/d1> prov:endedAtTime "2026-01-01T10:04:59.000+00:00"^^xsd:dateTime } }
