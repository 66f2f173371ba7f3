"""Retrieval: base retrievers, RRF, Diverse Triple Beam Search and graph expansion (NaiveGE, SyncGE)."""
