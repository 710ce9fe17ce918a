# breaks: a decision associated with something that is not a prov:SoftwareAgent
# expect: kgrsh:Decision-agent
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/agent/llm/1/gpt-4o-mini> a prov:SoftwareAgent } }
