"""GeAR Studio: a faithful implementation of GeAR (Graph-enhanced Agent for Retrieval-augmented Generation)."""

__version__ = "0.1.0"
