"""The contract between the engine and every UI: typed events and the Trace that records them (events), plain-text
narration for the CLI (narrate), and two runs of one question compared (difference). It imports nothing of the
engine's stages: the engine builds events from its results (gear.agent.event_builders), and a UI reads them without
an index or a model.

The events are re-exported here, so `from gear.trace import Trace, BeamsSearched` is how callers name them.

schema holds the one decoder of a trace file, which is untrusted input."""

from gear.trace.events import *  # noqa: F403 - the event vocabulary is this package's public face
from gear.trace.events import __all__ as _events

__all__ = list(_events)
