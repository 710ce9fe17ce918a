# breaks: an LLM decision without its prompt hash
# expect: kgrsh:Decision-llmFieldsTogether
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/decision/d2> kgr:promptSha256 ?h } }
