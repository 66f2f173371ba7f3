"""Search backends: one protocol, so retrievers and the agent never know which store they talk to."""

from gear.store.base import SearchBackend, StoreError, passage_text, sequence_text, triple_text

__all__ = ["SearchBackend", "StoreError", "passage_text", "sequence_text", "triple_text"]
