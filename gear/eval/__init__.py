"""Evaluation over a QA set as the paper and HippoRAG define it: the report (`gear.eval.report`: one run per question,
or the paper's one run per cut-off, `gear.eval.protocol`) and two reports lined up question by question
(`gear.eval.pairing`, its paired numbers in `gear.eval.paired`). The measures themselves are `gear.measures` (the
agent and the trace read them too); where a gold passage was lost is `gear.diagnosis`.

Its other modules: report_file (the one decoder of a report file), run_differences (what two runs differ in,
in words), sweep (a grid of evaluations), iterations (what a run had after each iteration), density (triple density)
and paper_analyses (the bundled runs behind the paper's analyses beyond Table 1)."""
