"""The session-state keys more than one module reads or writes, each with what its value is: a page or view names a
key from here, never as a bare string, so no module has to import another page's to find it."""

HISTORY = "run_history"  # session state: this session's finished runs, newest last
TRACE = "trace"  # session state: the run shown (Ask, teaching mode), set by every page that opens one
TRACE_SOURCE = "trace_source"  # session state: where the run shown came from, in words
QUESTION = "question"  # session state (and the Ask page's question box): the question asked next
INDEX_SELECTED = "index_selected"  # session state (and the sidebar's index picker): the index chosen
TEACH_STEP = "teach_step"  # session state: the step teaching mode shows (from 0)
EXAMPLE = "trace_example"  # session state: the bundled example shown (its stem), if the trace is one
RAN_HERE = "trace_ran_here"  # session state: the session's trace is a run made in this session (not a loaded file)
MARKS = "gold_marks"  # session state: run key -> Marks
LINK = "lesson_link"  # session state: the shown trace's address parameters ({"trace": stem} or {"saved": name})
TEACHING = "teaching"  # session state (and the Ask page's toggle): teaching mode is on
EVAL_SELECTED = "eval_selected"  # session state: the evaluations just run (the Evaluate page's tabs open on them)
EVAL_SHOW = "eval_show"  # session state (and the Evaluate page's list): the saved evaluations shown
