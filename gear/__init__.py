"""GeAR Studio: a faithful implementation of GeAR (Graph-enhanced Agent for Retrieval-augmented Generation).

The front door holds the few names a user needs:

    from gear import Engine, Settings, FinalRanking, Reasoned

    engine = Engine.open("INDEX_DIR")                     # an index built by `gear index`
    run = engine.retrieve("…", settings=engine.settings.with_(expand="gear"))
    run.answer, run.trace.first(FinalRanking), run.trace.of(Reasoned)

`Engine` opens an index and runs any method on a question, returning a `Run`; `Settings` holds every knob (GEAR_*
variables, .env); a `Trace` records the run as typed events — the event types below — and replays it without an
index or a model (`Trace.load`). Everything else lives in the packages (docs/architecture.md). The engine loads on
first use of `Engine`, `Run` or `Settings`, so that `import gear.trace` alone (a UI reading traces) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    Trace,
    TraceError,
    TriplesLinked,
    Warned,
)

if TYPE_CHECKING:
    from gear.agent import Engine, Run
    from gear.config import Settings

__version__ = "0.1.0"

_ENGINE_SIDE = {"Engine": "gear.agent", "Run": "gear.agent", "Settings": "gear.config"}  # loaded on first use

__all__ = [
    "Answered",
    "BaseRetrieved",
    "BeamsSearched",
    "Engine",
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
    "Run",
    "RunFinished",
    "RunStarted",
    "Settings",
    "StageTimed",
    "ThoughtWritten",
    "Trace",
    "TraceError",
    "TriplesLinked",
    "Warned",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name in _ENGINE_SIDE:
        value = getattr(importlib.import_module(_ENGINE_SIDE[name]), name)
        globals()[name] = value  # found once
        return value
    raise AttributeError(f"module 'gear' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
