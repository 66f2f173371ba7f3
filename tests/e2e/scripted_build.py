"""`python -m tests.e2e.scripted_build run app.py …`: the app exactly as `streamlit run` starts it, except that triple
extraction is answered by a scripted model, never the real one: one triple per passage, named after the passage's
title, each after $GEAR_TEST_PASSAGE_SECONDS (default 1) — and, when $GEAR_TEST_RELEASE names a file, the first
passage's answer only once that file exists. So a browser test can look at the Index page while a build's first
passage is still being extracted (tests/e2e/test_own_index.py), as tests/e2e/held_build.py holds a demo's build."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


class ScriptedExtraction:
    """The extraction model's stand-in: `{"triples": [[title, "is described in", "the corpus"]]}` for each passage."""

    model = "scripted-extraction"

    def __init__(self, seconds: float, release: Path | None) -> None:
        self.seconds, self.release, self.calls = seconds, release, 0

    def complete(self, messages: list, *, json_schema: Any = None, max_tokens: int = 512, on_text: Any = None) -> Any:
        from gear.llm import LLMResult
        from tests.scripted_llm import passage_title

        self.calls += 1
        while self.calls == 1 and self.release is not None and not self.release.exists():
            time.sleep(0.1)
        time.sleep(self.seconds)
        title = passage_title(messages)
        text = json.dumps({"named_entities": [title], "triples": [[title, "is described in", "the corpus"]]})
        if on_text is not None:
            on_text(text)
        return LLMResult(text, prompt_tokens=200, completion_tokens=len(text) // 4, seconds=self.seconds,
                         model=self.model)


def script_the_extraction() -> None:
    from gear.extract import bridge

    release = os.environ.get("GEAR_TEST_RELEASE")
    llm = ScriptedExtraction(float(os.environ.get("GEAR_TEST_PASSAGE_SECONDS", "1")),
                             Path(release) if release else None)
    bridge.llm_from_settings = lambda settings: llm  # type: ignore[assignment]


if __name__ == "__main__":
    script_the_extraction()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())
