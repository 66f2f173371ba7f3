"""Running the methods: the Engine facade that scripts, the CLI and the app call (engine), which owns a run's life;
the narrow context a runner works on (context); the paper's modules as steps over it (steps) and what they ask the LLM
(asks, with the small profile's guards in checks); the builders that turn the stages' results into trace events
(event_builders); one runner module per method (methods/, registered in gear.methods); and the run record with its
stage timer (run). Around a run: where a live run is and what it waits for (progress), whether a question replays
from the recordings and asking the model again (recorded), and a recorded beam search searched again with other knobs
(beam_replay)."""

from gear.agent.engine import Engine
from gear.agent.run import Run, Timer

__all__ = ["Engine", "Run", "Timer"]
