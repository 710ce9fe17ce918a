# breaks: a TextQuoteSelector whose exact text is not the text at the offsets
# expect: kgrsh:Target-quoteMatchesText
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE WHERE { GRAPH ?g { <https://w3id.org/kg-rag/id/ann/a1#quote> oa:exact ?e } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/doc/fruit-trees> { <https://w3id.org/kg-rag/id/ann/a1#quote> oa:exact "הבד" } }
