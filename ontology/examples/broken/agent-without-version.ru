# breaks: a selector agent without kgr:version
# expect: kgrsh:Agent-version
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/agent/knowledge/1> kgr:version ?v } }
