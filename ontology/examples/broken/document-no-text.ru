# breaks: a document without kgr:text
# expect: kgrsh:TextOwner-text
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/doc/fruit-trees> kgr:text ?t } }
