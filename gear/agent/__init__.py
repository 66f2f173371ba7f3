"""Running the methods: the Engine facade that scripts, the CLI and the app call (engine), which owns a run's life;
the narrow context a runner works on (context); the paper's modules as steps over it (steps) and what they ask the LLM
(asks, with the small profile's guards in checks); the views that turn the stages' results into trace events (views);
one runner module per method (methods/, registered in gear.methods); and the run record with its stage timer (run)."""

from gear.agent.engine import Engine
from gear.agent.run import Run, Timer

__all__ = ["Engine", "Run", "Timer"]
