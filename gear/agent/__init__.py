"""The methods that use an LLM and the facade that runs any method: SyncGE and the GeAR loop (loop), the
run record and stage timer they share (run), and the Engine (engine) that scripts, the CLI and the app call."""

from gear.agent.engine import Engine
from gear.agent.run import Run, Timer

__all__ = ["Engine", "Run", "Timer"]
