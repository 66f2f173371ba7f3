"""Every event type a run records, under one name: `from gear.events import FinalRanking, Reasoned`.

A `Trace` (gear.trace) is a list of these; a UI reads a run through them without an index or a model. They are
defined in gear.trace.events, with the views they carry in gear.trace.views. Importing this module loads gear.trace
only, never the engine.
"""

from __future__ import annotations

from gear.trace.events import *  # noqa: F403 - this module is the events' one public name
from gear.trace.events import __all__ as _defined

__all__ = [name for name in _defined if name != "EVENT_TYPES"]
