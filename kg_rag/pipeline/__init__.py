"""The pipeline stages between the store and the façade, in the order they run:

- :mod:`.index` — documents into passages, each passage annotated and decided, one update per document;
- :mod:`.evidence` — what a selector knows of each candidate sense (definitions, examples, neighbours);
- :mod:`.decide` — the ambiguous mentions of a text decided together, stored decisions reused;
- :mod:`.record` — everything the pipeline writes, as RDF quads (annotations, PROV-O decisions,
  the parameters a question was ranked with);
- :mod:`.retrieve` — documents ranked by the chosen concepts, SKOS expansion, rarity, each with
  the contributions its score sums; its parameters are one :mod:`.ranking_config` object;
- :mod:`.shapes` — what was written checked against ``ontology/shapes.ttl``.

:class:`kg_rag.KnowledgeGraph` sequences them; nothing outside ``kg_rag`` calls them directly.
"""
