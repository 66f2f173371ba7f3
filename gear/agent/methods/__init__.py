"""One module per method, each with a `run(ctx, question, k) -> Outcome` (gear.agent.context.Runner): base retriever
only (base), NaiveGE (naive), SyncGE (sync), the GeAR loop (gear), and the peers PPR (ppr) and IRCoT (ircot). The
registry (gear.methods) sits below the agent and names each runner by its module; RUNNERS holds the functions."""

from __future__ import annotations

from gear.agent.context import Runner
from gear.agent.methods import base, ircot, naive, ppr, sync
from gear.agent.methods import gear as gear_loop  # not `gear`: that would hide the package inside this module
from gear.methods import Method

#: runner module name → its `run`, what a Method's `runner` names
RUNNERS: dict[str, Runner] = {module.__name__.rpartition(".")[2]: module.run
                              for module in (base, naive, sync, gear_loop, ppr, ircot)}


def runner(method: Method) -> Runner:
    """The runner a method's record names."""
    try:
        return RUNNERS[method.runner]
    except KeyError:
        raise LookupError(f"method {method.name!r}: no runner module {method.runner!r} in gear.agent.methods "
                          f"(there are {', '.join(RUNNERS)})") from None
