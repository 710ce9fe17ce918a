"""Evaluation on gold data: ``wsd`` (sense selection, Raganato et al. 2017 format) and
``retrieval`` (BEIR layout); ``report`` runs them on the shared development sets (``make eval``)."""
