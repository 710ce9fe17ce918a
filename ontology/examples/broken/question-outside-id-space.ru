# breaks: a question IRI not minted by kg-rag
# expect: kgrsh:QuestionShape
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/question/q1> { <http://example.org/q> a kgr:Question ; dct:identifier "q" ; dct:language "en" ; kgr:text "q" ; kgr:sha256 "8e35c2cd3bf6641bdb0e2050b76932cbb2e6034a0ddacc1d9bea82a6ba57f7cf" ; prov:generatedAtTime "2026-01-01T10:06:00Z"^^xsd:dateTime } }
