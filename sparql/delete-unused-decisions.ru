# purpose: remove decisions (with their candidates) that no annotation of any graph uses, e.g. after questions were forgotten; unbound, every unused decision; a decision a later one revises (kgr:revisionOf) stays, as that one's history
# inputs: ?decision
# outputs: update
DELETE {
  GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision ?p ?o . ?cand ?cp ?co }
}
WHERE {
  GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision a kgr:SenseSelection }
  FILTER NOT EXISTS { GRAPH ?g { ?ann kgr:decision ?decision } }
  FILTER NOT EXISTS { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?newer kgr:revisionOf ?decision } }
  { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision ?p ?o } }
  UNION
  { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision kgr:candidate ?cand . ?cand ?cp ?co } }
}
