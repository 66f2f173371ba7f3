"""Search backends: one protocol, so retrievers and the agent never know which store they talk to.

Its modules: base (the SearchBackend protocol), memory (the embedded backend), vectors (dense search),
graph (entity normalisation and neighbours), fusion (RRF) and elastic (the Elasticsearch backend)."""

from gear.store.base import SearchBackend, StoreError, passage_text, sequence_text, triple_text

__all__ = ["SearchBackend", "StoreError", "passage_text", "sequence_text", "triple_text"]
