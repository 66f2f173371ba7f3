"""The app's side of the diagnosis (gear.diagnosis): marks (a person marks a run's gold passages under an Ask result),
panel (the gold panel and the stage tables of one run), review (a person's verdict on the proposed category, kept as
the trace's tags) and runs (where the gold was lost over many runs: an evaluation, a folder of traces)."""
