"""What an attacker puts in a corpus, a file name, a question or a model's answer to make the app or the terminal
obey it (issue 42): HTML and script, Markdown and Streamlit syntax, links and images to an outside address, bare
URLs, Rich markup, and terminal control sequences (C0 and C1). Shared by the escapers' property tests, the CLI test
and the browser test."""

from __future__ import annotations

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
