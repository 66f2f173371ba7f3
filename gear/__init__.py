"""GeAR Studio: a faithful implementation of GeAR (Graph-enhanced Agent for Retrieval-augmented Generation).

The front door holds the few names a user needs:

    from gear import Engine, Settings, Trace, Run
    from gear.events import FinalRanking, Reasoned

    engine = Engine.open("INDEX_DIR")                     # an index built by `gear index`
    run = engine.retrieve("…", settings=engine.settings.with_(method="gear"))
    run.answer, run.trace.first(FinalRanking), run.trace.of(Reasoned)

`Engine` opens an index and runs any method on a question, returning a `Run`; `Settings` holds every knob (GEAR_*
variables, .env); a `Trace` records the run as typed events — every event type is in `gear.events` — and replays
it without an index or a model (`Trace.load`). Everything else lives in the packages (docs/architecture.md). The
engine loads on first use of `Engine`, `Run` or `Settings`, so that `import gear.trace` alone (a UI reading traces)
stays light.

The event types were importable from `gear` itself before `gear.events` held them; those names still resolve, with a
DeprecationWarning, for one release.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from gear import events
from gear.trace import Trace, TraceError

if TYPE_CHECKING:
    from gear.agent import Engine, Run
    from gear.config import Settings

__version__ = "0.1.0"

_ENGINE_SIDE = {"Engine": "gear.agent", "Run": "gear.agent", "Settings": "gear.config"}  # loaded on first use

__all__ = ["Engine", "Run", "Settings", "Trace", "TraceError", "__version__", "events"]


def __getattr__(name: str) -> Any:
    if name in _ENGINE_SIDE:
        value = getattr(importlib.import_module(_ENGINE_SIDE[name]), name)
        globals()[name] = value  # found once
        return value
    if name in events.__all__:  # the old front door: kept for a release, never cached, so each use is told
        warnings.warn(f"gear.{name} moved to gear.events.{name}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return getattr(events, name)
    raise AttributeError(f"module 'gear' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
