"""The contract between the engine and every UI: typed events and the Trace that records them (events), the views
that turn engine results into events (views), and plain-text narration for the CLI (narrate).

The events are re-exported here, so `from gear.trace import Trace, BeamsSearched` is how callers name them.
"""

from gear.trace.events import *  # noqa: F403 - the event vocabulary is this package's public face
from gear.trace.events import __all__ as _events

__all__ = list(_events)
