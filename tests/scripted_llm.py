"""A scripted LLM for the app tests (AppTest and the real browser): every distinct prompt has one answer, as a
recorded cache needs, and its output carries HTML that must show as text (the XSS checks)."""

from __future__ import annotations

from gear.llm import LLMResult

XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"


class ScriptedLLM:
    """Answers by prompt: the reader adds the Mediterranean fact once memory exists; the reasoner says yes when the
    memory holds it (so every distinct prompt has one answer, as a recorded cache needs)."""

    model = "scripted"

    def complete(self, messages, *, json_schema=None, max_tokens=512) -> LLMResult:
        prompt = messages[-1]["content"]
        if prompt.startswith("Your task is to find facts"):
            text = f'("Mount Etna", "located on", "Sicily")\n("Mount Etna", "described as", "{XSS}")'
            if "preliminary facts" in prompt:
                text += '\n("Sicily", "largest island in", "Mediterranean Sea")'
        elif "Next Question:" in prompt and "# Your Task:" in prompt:
            text = "Next Question: Which sea is Sicily the largest island in?"
        elif "Answerable: Yes" in prompt and "# Your reply:" in prompt:
            facts = prompt.split("Your reply must follow")[0]
            text = ("Answerable: Yes\nAnswer: Mediterranean Sea" if "Mediterranean Sea" in facts
                    else f"Answerable: No\nWhy: the sea is missing {SCRIPT}")
        else:
            text = "Answer: Mediterranean Sea"
        return LLMResult(text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4, seconds=0.01,
                         model=self.model)
