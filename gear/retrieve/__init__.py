"""Retrieval: base retrievers, RRF, Diverse Triple Beam Search and graph expansion (NaiveGE, SyncGE), and the peer
HippoRAG 2-style PPR (its graph in ppr_graph, the walk and the per-index state in ppr)."""
