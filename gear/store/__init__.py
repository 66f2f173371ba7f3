"""Search backends: one protocol, so retrievers and the agent never know which store they talk to."""

from gear.store.base import IndexError_, SearchBackend, passage_text, sequence_text, triple_text

__all__ = ["IndexError_", "SearchBackend", "passage_text", "sequence_text", "triple_text"]
