"""Offline triple extraction (the paper's offline stage): the LLM runner with its prompt and schema (runner), the
resumable journal (journal), and the bridge that gives `gear index` and the app triples for an index (bridge)."""
