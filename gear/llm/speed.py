"""How fast a model reads and writes, learned from its live calls: the estimate a status line says before the model
starts ("the model is reading 1,300 tokens (≈ 15 s)") and the expected time of a live run in the example list.

Every live call (an LLMCalled answered by the model, not a recording or the memo) teaches `ModelSpeed` the model's
prompt-reading and writing speeds, fitted by least squares over the recent calls; before the first call, stated
defaults hold (DEFAULT_READ_RATE, DEFAULT_WRITE_RATE) and the line says the speed is assumed. The prompt's size is known
before the call from the LLMAsking event (≈4 characters a token), corrected by the ratio of counted to estimated
tokens of the calls so far; how much the model will write is the mean of what it wrote at that step before
(TYPICAL_WRITE until then).

A server with a prompt cache (llama-server, the embedded model; OpenAI's API too) does not read again the head of a
prompt it has already read: GeAR's reads of one iteration, and of the next, share most of their passages, and such a
read takes 2 s instead of 20. So the estimate reads only what the server has not seen: the longest head the prompt
shares with a recent prompt the model was sent (`ModelSpeed.cached_head`, llama-server's rules for which earlier
prompt it keeps), once the server has shown that it caches (a call that reported cached prompt tokens); and the
reading speed is learned from the tokens the server says it really read.

It belongs with the models (it was gear/trace/pace.py, inside the engine↔UI contract): it reads the LLM events of
gear.trace as its input, and the status line (gear.agent.progress.RunProgress) reads it.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gear import events as t
from gear import methods

#: prompt tokens read per second before any live call: the embedded 1.5B model in llama-server on 2 quiet cores read
#: 89-101 tokens/s cold (550-2,100 tokens; bench/llm_server.py, docs/results.md)
DEFAULT_READ_RATE = 85.0
#: tokens written per second before any live call: the same server wrote 29 (plain and schema-constrained, through
#: gear's client, with its OpenMP workers spinning briefly: gear.llm.llama_server.server_env); a busy machine less
DEFAULT_WRITE_RATE = 25.0
#: tokens written per step before the step was seen: medians over the recorded answers (assets/llm_cache)
TYPICAL_WRITE = {"read": 30, "reason": 35, "rewrite": 20, "think": 20, "qa": 4, "filter": 15}
#: earlier prompts remembered per model for the cache estimate: llama-server keeps its slot's last prompt and, in
#: RAM, the prompts it had to put aside (8 GiB by default, hundreds of GeAR reads)
RECENT_PROMPTS = 16
#: an earlier prompt other than the last counts only when the shared head is at least this share of it: llama-server
#: does not restore a prompt from its RAM cache for less (server_prompt_cache::load, "f_keep < 0.25")
KEEP_SHARE = 0.25

_PRIOR_TOKENS = (1000.0, 50.0)  # the two pseudo-calls that hold the defaults until real calls outweigh them


def step_kind(step: str) -> str:
    """"read (gist)" → "read": the step's kind, for what it writes."""
    return step.split(" ", 1)[0]


def common_head(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    return len(os.path.commonprefix((a, b)))  # noqa: RUF071 - characters, as meant (prompts, not paths)


@dataclass(frozen=True)
class Speed:
    """A model's reading and writing speed (tokens per second), and how many live calls it was learned from."""

    read_rate: float
    write_rate: float
    calls: int = 0

    def seconds(self, prompt_tokens: float, completion_tokens: float) -> float:
        return prompt_tokens / self.read_rate + completion_tokens / self.write_rate


class ModelSpeed:
    """Per model name: the speeds learned from its live calls (the most recent `window`), the ratio of counted to
    estimated prompt tokens, the tokens written per step, and the recent prompts its server has read (for servers
    that have shown a prompt cache). An engine owns the one its runs teach (gear.agent.engine.Engine.speed; each LLM
    call of a run reads and teaches it through its RunContext). Thread-safe: the sessions of an app share it."""

    def __init__(self, window: int = 24, read_rate: float = DEFAULT_READ_RATE,
                 write_rate: float = DEFAULT_WRITE_RATE) -> None:
        self.default = Speed(read_rate, write_rate)
        self._calls: dict[str, deque[tuple[int, int, float]]] = {}
        self._ratios: dict[str, deque[float]] = {}
        self._written: dict[str, deque[int]] = {}
        self._prompts: dict[str, deque[str]] = {}
        self._caching: set[str] = set()  # models whose server reported prompt tokens taken from its cache
        self._window = window
        self._lock = threading.Lock()

    def observe(self, called: t.LLMCalled, asked: t.LLMAsking | None = None, cached_prompt_tokens: int | None = None,
                prompt: str = "") -> None:
        """Learn from one finished call: when the model answered it now, its speed (over the prompt tokens the server
        says it read, not those it took from its cache) and its prompt (what the server now holds); from any source,
        what the step wrote and how far the prompt estimate was off."""
        model = asked.model if asked is not None else called.model  # the name estimates will ask by
        live = (called.source or ("record" if called.cached else "model")) == "model"
        with self._lock:
            self._written.setdefault(step_kind(called.step), deque(maxlen=self._window)).append(
                called.completion_tokens)
            if asked is not None and asked.prompt_tokens > 0 and called.prompt_tokens > 0:
                self._ratios.setdefault(model, deque(maxlen=self._window)).append(
                    called.prompt_tokens / asked.prompt_tokens)
            if live and called.seconds > 0:
                read = max(0, called.prompt_tokens - (cached_prompt_tokens or 0))
                self._calls.setdefault(model, deque(maxlen=self._window)).append(
                    (read, called.completion_tokens, called.seconds))
            if live and cached_prompt_tokens:
                self._caching.add(model)
            if live and prompt:
                self._prompts.setdefault(model, deque(maxlen=RECENT_PROMPTS)).append(prompt)

    def cached_head(self, model: str, prompt: str) -> int:
        """Characters at the start of `prompt` that the model's server has already read: the longest head shared with
        the last prompt it was sent, or with an earlier one whose share it keeps (KEEP_SHARE); 0 until the server has
        reported a cache."""
        with self._lock:
            if model not in self._caching:
                return 0
            recent = list(self._prompts.get(model, ()))
        best = 0
        for position, earlier in enumerate(recent):
            shared = common_head(earlier, prompt)
            if position == len(recent) - 1 or shared >= KEEP_SHARE * len(earlier):
                best = max(best, shared)
        return best

    def speed(self, model: str) -> Speed:
        with self._lock:
            calls = list(self._calls.get(model, ()))
        if not calls:
            return self.default
        return fit(calls, self.default)

    def prompt_tokens(self, asked: t.LLMAsking) -> int:
        """The prompt's size in the model's tokens: the estimate, times the ratio seen on earlier calls."""
        return max(1, round(asked.prompt_tokens * self._ratio(asked.model)))

    def cached_tokens(self, asked: t.LLMAsking) -> int:
        """Of the prompt's tokens, those the server has already read (the announced head, in the model's tokens)."""
        return min(self.prompt_tokens(asked), round(asked.cached_tokens * self._ratio(asked.model)))

    def _ratio(self, model: str) -> float:
        with self._lock:
            ratios = sorted(self._ratios.get(model, ()))
        return ratios[len(ratios) // 2] if ratios else 1.0

    def written(self, step: str, max_tokens: int) -> float:
        """Tokens the step is expected to write: its mean so far, else the typical count, never above the cap."""
        kind = step_kind(step)
        with self._lock:
            seen = list(self._written.get(kind, ()))
        expected = sum(seen) / len(seen) if seen else TYPICAL_WRITE.get(kind, 30)
        return min(float(max_tokens), expected)

    def estimate(self, asked: t.LLMAsking) -> float:
        """Seconds the call will take once the model starts on it: reading what the server has not read yet, and
        writing."""
        unread = self.prompt_tokens(asked) - self.cached_tokens(asked)
        return self.speed(asked.model).seconds(unread, self.written(asked.step, asked.max_tokens))

    def run_seconds(self, model: str, method: methods.Method, settings: Mapping[str, Any] | object) -> float | None:
        """Seconds a live run of `method` is expected to spend on its LLM calls (its typical tokens per question at
        the learned speed); None for a run that asks no LLM."""
        prompt, completion = method.typical_tokens
        if not method.uses_llm(settings) or not (prompt or completion):
            return None
        return self.speed(model).seconds(prompt, completion)


def fit(calls: list[tuple[int, int, float]], prior: Speed) -> Speed:
    """Least squares seconds ≈ prompt/read_rate + completion/write_rate over the calls, with the prior speed as two
    pseudo-calls (one that only reads, one that only writes) so that a few calls that cannot tell the two apart do
    not give nonsense; a rate the data would make negative keeps the prior's."""
    rows = [(float(p), float(c), s) for p, c, s in calls]
    rows.append((_PRIOR_TOKENS[0], 0.0, _PRIOR_TOKENS[0] / prior.read_rate))
    rows.append((0.0, _PRIOR_TOKENS[1], _PRIOR_TOKENS[1] / prior.write_rate))
    spp = sum(p * p for p, _, _ in rows)
    scc = sum(c * c for _, c, _ in rows)
    spc = sum(p * c for p, c, _ in rows)
    sps = sum(p * s for p, _, s in rows)
    scs = sum(c * s for _, c, s in rows)
    det = spp * scc - spc * spc
    a, b = (scc * sps - spc * scs) / det, (spp * scs - spc * sps) / det  # seconds per prompt / written token
    if a <= 0:
        a = 1 / prior.read_rate
        b = max((scs - a * spc) / scc, 1e-6)
    elif b <= 0:
        b = 1 / prior.write_rate
        a = max((sps - b * spc) / spp, 1e-6)
    return Speed(1 / a, 1 / b, len(calls))


#: the process's shared record of its models' speeds: every Engine's unless it is given its own (the engines of one
#: process share the one embedded model server); a run teaches its engine's (gear.agent.context.RunContext.ask), and
#: the app's status line and example list read the engine's (Engine.speed)
MODEL_SPEED = ModelSpeed()
