# breaks: an accepted alignment link whose ontolex:reference is not stated in the alignment graph
# expect: kgrsh:Alignment-acceptedIsStated
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
DELETE DATA { GRAPH <https://w3id.org/kg-rag/id/graph/alignments> {
  <https://w3id.org/kg-rag/id/alignment/0a1b2c3d4e5f60718293a4b5> kgr:alignmentStatus "proposed" } } ;
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/alignments> {
  <https://w3id.org/kg-rag/id/alignment/0a1b2c3d4e5f60718293a4b5> kgr:alignmentStatus "accepted" ;
    kgr:reviewedAtTime "2026-01-01T10:30:00Z"^^xsd:dateTime } }
