"""What one page owns, each module named after its page (app_pages/<page>.py) and imported by that page only: ask
(one question, asked live or replayed, kept, asked again), compare (one question, several methods), evaluate (the
evaluation form and its reports) with evaluate_pairs (two evaluations question by question) and evaluate_sweeps (a
sweep's grid, the paper's analyses beyond Table 1), index (an index explored, a new one built) with index_uploads (the
uploads checked as a whole), and traces (the saved runs listed, filtered and tagged)."""
