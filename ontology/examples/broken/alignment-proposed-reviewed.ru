# breaks: a proposed alignment link with a review time (only accepted or rejected links are reviewed)
# expect: kgrsh:Alignment-reviewedHasTime
# (a SPARQL update applied to ../valid.trig; the standard kg-rag prefixes are prepended)
INSERT DATA { GRAPH <https://w3id.org/kg-rag/id/graph/alignments> {
  <https://w3id.org/kg-rag/id/alignment/0a1b2c3d4e5f60718293a4b5> kgr:reviewedAtTime "2026-01-01T10:30:00Z"^^xsd:dateTime } }
