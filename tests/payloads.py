"""What an attacker puts in a corpus, a file name, a question or a model's answer to make the app or the terminal
obey it: HTML and script, Markdown and Streamlit syntax, links and images to an outside address, bare
URLs, Rich markup, and terminal control sequences (C0 and C1). Shared by the escapers' property tests, the CLI test
and the browser test."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tests.scripted_llm import ScriptedLLM

PAYLOADS = (
    "<script>window.__xss=1</script>",
    "<img src=x onerror=\"window.__xss=2\">",
    "<iframe srcdoc=\"<script>parent.__xss=3</script>\"></iframe>",
    "[t](javascript:window.__xss=4)",
    "**bold** :red[x] $y$",
    "![img](http://127.0.0.1:9/track.png)",
    "https://evil.example/x",
    "www.evil.example/y",
    "write to me@evil.example",
    "<http://evil.example/auto>",
    "[ref]\n\n[ref]: http://evil.example/ref",
    "<a href=\"javascript:window.__xss=5\">a</a>",
    ":material/warning: :smile: ~~strike~~ `code` _em_",
    "# heading",
    "> quote",
    "&lt;b&gt;entity&lt;/b&gt;",
    "[bold]rich[/bold] [link=http://evil.example]x[/link]",
    "\x1b[31mRED\x1b[0m",
    "\x1b]0;pwned\x07",
    "\x9b31mC1\x9d0;pwned\x9c\x85",
    "back\rspace\b\x7fdel",
)

# one line of all of them, for a title or a file name (no newline: a title is one line)
ONE_LINE = " ".join(p.replace("\n", " ") for p in PAYLOADS)

# the addresses a payload points at: no element of the page may link to or load any of them
PAYLOAD_URLS = ("javascript:", "127.0.0.1:9", "evil.example")


# -- a corpus that carries them everywhere, in the JSON + OpenIE + QA shapes a person uploads (no model needed) --------
def _title(n: int) -> str:
    """A passage title: one payload, on one line, after a word the searches find."""
    return f"Etna {n} " + PAYLOADS[n % len(PAYLOADS)].replace("\n", " ")


PAYLOAD_DOCS = [("Mount Etna", "Mount Etna is an active volcano on the island of Sicily."),
                ("Sicily", "Sicily is the largest island in the Mediterranean Sea."),
                *((_title(n), f"Mount Etna rumbles over Sicily {p} in the Mediterranean Sea.")
                  for n, p in enumerate(PAYLOADS))]
PAYLOAD_QUESTION = "Which sea is Sicily with Mount Etna in? https://evil.example/q **bold** <b>x</b>"


def payload_files() -> tuple[list[dict], dict, list[dict]]:
    """(corpus, OpenIE, QA set) as JSON data: HippoRAG's corpus and OpenIE shapes, a MuSiQue-style QA set whose id,
    question, answer and gold titles are payloads too."""
    corpus = [{"idx": n, "title": title, "text": text} for n, (title, text) in enumerate(PAYLOAD_DOCS)]
    triples = [[["Mount Etna", "located on", "Sicily"]], [["Sicily", "largest island in", "Mediterranean Sea"]],
               *([["Mount Etna", f"described as {p}", p], [p, "rumbles over", "Sicily"]] for p in PAYLOADS)]
    openie = {"docs": [{"idx": n, "passage": f"{title}\n{text}", "extracted_triples": triples[n]}
                       for n, (title, text) in enumerate(PAYLOAD_DOCS)]}
    qa = [{"id": "2hop__pwn<script>", "question": PAYLOAD_QUESTION, "answer": "Mediterranean Sea " + ONE_LINE,
           "paragraphs": [{"title": title, "paragraph_text": text, "is_supporting": n in (0, 1, 5)}
                          for n, (title, text) in enumerate(PAYLOAD_DOCS)]}]
    return corpus, openie, qa


MODEL_TAIL = " \x1b]0;pwned\x07 [bold]x[/bold] \x1b[31mred\x9b1m <img src=x onerror=window.__xss=9> https://evil.example/m"


class PayloadLLM(ScriptedLLM):
    """tests.scripted_llm.ScriptedLLM's answers in the paper's free-text profile, each followed by MODEL_TAIL: the
    reader, reasoner, rewriter, IRCoT and QA all bring payloads back into the run."""

    def complete(self, messages: Any, *, json_schema: Any = None, max_tokens: int = 512, on_text: Any = None) -> Any:
        answer = super().complete(messages, json_schema=json_schema, max_tokens=max_tokens)
        result = replace(answer, text=answer.text + MODEL_TAIL)
        if on_text is not None:
            on_text(result.text)
        return result
