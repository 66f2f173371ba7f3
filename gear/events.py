"""Every event type a run records, under one name: `from gear.events import FinalRanking, Reasoned`.

A `Trace` is a list of these (gear.trace defines them, with the views they carry); a UI reads a run through them
without an index or a model. Importing this module loads gear.trace only, never the engine.
"""

from __future__ import annotations

from gear.trace import (
    Answered,
    BaseRetrieved,
    BeamsSearched,
    Event,
    FinalRanking,
    GistUpdated,
    InitialNodes,
    IterationStarted,
    LLMAsking,
    LLMCalled,
    LLMText,
    LLMWaiting,
    PassagesAdded,
    PassagesExpanded,
    PassagesFused,
    PassagesLinked,
    PPRRanked,
    PPRSeeded,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    RunFinished,
    RunStarted,
    StageTimed,
    ThoughtWritten,
    TriplesLinked,
    Warned,
)

__all__ = [
    "Answered",
    "BaseRetrieved",
    "BeamsSearched",
    "Event",
    "FinalRanking",
    "GistUpdated",
    "InitialNodes",
    "IterationStarted",
    "LLMAsking",
    "LLMCalled",
    "LLMText",
    "LLMWaiting",
    "PPRRanked",
    "PPRSeeded",
    "PassagesAdded",
    "PassagesExpanded",
    "PassagesFused",
    "PassagesLinked",
    "ProximalTriples",
    "QueryRewritten",
    "Reasoned",
    "RunFinished",
    "RunStarted",
    "StageTimed",
    "ThoughtWritten",
    "TriplesLinked",
    "Warned",
]
