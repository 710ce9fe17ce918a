# breaks: an annotation target without its TextQuoteSelector
# expect: kgrsh:Target-quote kgrsh:TargetShape|oa:hasSelector
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a2#t> oa:hasSelector <https://w3id.org/kg-rag/id/ann/a2#quote> } }
