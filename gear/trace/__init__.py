"""The contract between the engine and every UI: the typed events of a run (events; imported as `gear.events`), what
they keep of passages, triples and beams (views), the Trace that records them (record), what a run's answers cost
the model (cost), the one decoder of a trace file (schema), plain-text narration for the CLI (narrate), and two runs
of one question compared (difference). It imports nothing of the engine's stages: the engine builds events from its
results (gear.agent.event_builders), and a UI reads them without an index or a model.

`from gear.trace import Trace, PassageView` names the Trace and the views; the events are named from gear.events
(`from gear.events import BeamsSearched`). Their old names here still work for a release, with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
from typing import Any

from gear.trace import events as _events
from gear.trace.cost import RunCost
from gear.trace.events import EVENT_TYPES
from gear.trace.record import Listener, Trace
from gear.trace.schema import FORMAT_VERSION, TraceError
from gear.trace.views import (
    BeamCandidatesView,
    BeamView,
    CandidateView,
    EdgeView,
    EntityView,
    FactSeedView,
    PassageLinkView,
    PassageView,
    TripleLinkView,
    TripleView,
)

__all__ = [
    "EVENT_TYPES",
    "FORMAT_VERSION",
    "BeamCandidatesView",
    "BeamView",
    "CandidateView",
    "EdgeView",
    "EntityView",
    "FactSeedView",
    "Listener",
    "PassageLinkView",
    "PassageView",
    "RunCost",
    "Trace",
    "TraceError",
    "TripleLinkView",
    "TripleView",
]


def __getattr__(name: str) -> Any:
    if name in _events.__all__:
        warnings.warn(f"gear.trace.{name} moved to gear.events.{name}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return getattr(_events, name)
    raise AttributeError(f"module 'gear.trace' has no attribute {name!r}")
