# breaks: a catalog record's kgr:sourceKind is not one of skos, ontolex, wn-lmf, rdf
# expect: kgrsh:CatalogRecord-sourceKind
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
PREFIX th: <http://example.org/thesaurus/>
DELETE DATA { GRAPH <https://w3id.org/kg-rag/id/graph/catalog> { <https://w3id.org/kg-rag/id/source/demo> kgr:sourceKind "ontolex" } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/catalog> { <https://w3id.org/kg-rag/id/source/demo> kgr:sourceKind "csv" } }
