"""Retrieval over an index's store: Diverse Triple Beam Search and graph expansion (NaiveGE, SyncGE), sequence
scoring, and the peer HippoRAG 2-style PPR (its graph in ppr_graph, the walk and the per-index state in ppr). The base
retrievers and RRF are the store's (gear.store: search_passages, fusion.rrf).

Its modules: beam (Algorithm 1), scoring (score(q, T)), expand (flatten beams, NaiveGE, SyncGE), ppr_graph and
ppr."""
