"""What every page stands on: keys (the session keys), session (the run shown: `show`; the history of runs), paths
(the data folder and the assets), demos (the bundled demos and their builds), walkthrough (the walk-through's
recording), resources (engines, encoders and QA sets made once per process), index_questions (the questions an index
offers, the person's own first), sidebar (the index, method and knobs),
safe (escaping, the page guard), saves (a person's files), links (an address naming a lesson's step), run_gold (a
run's gold now), run_rows (a run as a table row), example_marks (which example questions replay at once),
report_names (saved evaluations named as a person reads them), waiting (a question waiting for its index) and widgets
(the drawing helpers every view shares)."""
