"""One module per method, each with a `run(ctx, question, k) -> Outcome` (gear.agent.context.Runner): base retriever
only (base), NaiveGE (naive), SyncGE (sync), the GeAR loop (gear), and the peers PPR (ppr) and IRCoT (ircot). The
registry (gear.methods) names each runner by its import path; `runner` loads it."""

from __future__ import annotations

import functools
import importlib

from gear.agent.context import Runner
from gear.methods import Method


@functools.cache
def runner(method: Method) -> Runner:
    """The runner a method's record names ("module:function"), imported on first use."""
    module, _, name = method.runner.partition(":")
    found = getattr(importlib.import_module(module), name, None)
    if not callable(found):
        raise ImportError(f"method {method.name!r}: its runner {method.runner!r} is not a function")
    return found
