# breaks: a catalog record without void:triples
# expect: kgrsh:CatalogRecordShape|void:triples
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/source/demo> void:triples ?n } }
