"""A run drawn, the same live or replayed: trace (the trace view, event by event, and the status line), gear_steps
and peer_steps (one drawing function per event: GeAR's steps, the peers'), teaching (teaching mode, one lesson step at
a time), sub_step (a lesson's sub-step: the beam search's, tripleLink's or PPR's) and beam_knobs (the beam search's
knobs on a step of Algorithm 1)."""
