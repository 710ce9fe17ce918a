# purpose: remove decisions (with their candidates) that no annotation of any graph uses, e.g. after questions were forgotten; unbound, every unused decision
# inputs: ?decision
# outputs: update
DELETE {
  GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision ?p ?o . ?cand ?cp ?co }
}
WHERE {
  GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision a kgr:SenseSelection }
  FILTER NOT EXISTS { GRAPH ?g { ?ann kgr:decision ?decision } }
  { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision ?p ?o } }
  UNION
  { GRAPH <https://w3id.org/kg-rag/id/graph/decisions> { ?decision kgr:candidate ?cand . ?cand ?cp ?co } }
}
