"""Offline triple extraction (the paper's offline stage): the LLM runner with its prompt and schema (runner), the
resumable journal (journal), and the bridge that gives `gear index` and the app triples for an index (bridge).

Beside them: outputs (the shapes of the extraction answer), repeats (a small model's repetition loop stopped
as it starts) and progress (indexing progress a person can read)."""
