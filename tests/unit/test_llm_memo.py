"""Never pay twice (the memo) and recorded-else-live (the default LLM): each rule pinned with a counting fake model."""

from __future__ import annotations

import json
from pathlib import Path

from gear.config import Settings
from gear.llm import CachedLLM, LLMResult, MemoLLM, make_llm
from gear.llm.base import answered_at_once
from gear.llm.replay import cache_key

MESSAGES = [{"role": "user", "content": "Where is Mount Etna?"}]


class CountingLLM:
    model = "m"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        self.calls += 1
        text = f"answer {self.calls} to {messages[-1]['content']}"
        if on_text is not None:
            for word in text.split(" "):
                on_text(word + " ")
        return LLMResult(text, 10, 5, 2.5, self.model)


def test_memo_answers_an_identical_call_once_and_marks_it() -> None:
    inner = CountingLLM()
    memo = MemoLLM(inner)
    first = memo.complete(MESSAGES, max_tokens=64)
    streamed: list[str] = []
    again = memo.complete(MESSAGES, max_tokens=64, on_text=streamed.append)
    assert inner.calls == 1
    assert again.text == first.text and again.source == "memo" and again.cached
    # it keeps what the answer cost when the model wrote it: a run replayed from the memo is not free (Trace.cost)
    assert (again.prompt_tokens, again.completion_tokens, again.seconds) == (10, 5, 2.5)
    assert first.source == "model"
    assert streamed == [first.text]  # the listener still sees the text, at once
    # anything that changes the request is a new call
    memo.complete(MESSAGES, max_tokens=65)
    memo.complete(MESSAGES, max_tokens=64, json_schema={"type": "object"})
    memo.complete([{"role": "user", "content": "Where is Paris?"}], max_tokens=64)
    assert inner.calls == 4


def test_memo_is_bounded() -> None:
    memo = MemoLLM(CountingLLM(), max_entries=2)
    for n in range(3):
        memo.complete([{"role": "user", "content": f"q{n}"}])
    memo.complete([{"role": "user", "content": "q0"}])  # evicted: asked again
    assert memo.inner.calls == 4  # type: ignore[attr-defined]


def _record(directory: Path, model: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{cache_key(model, MESSAGES, None, 512)}.json"
    path.write_text(json.dumps({"model": model, "messages": MESSAGES, "json_schema": None, "max_tokens": 512,
                                "text": text, "prompt_tokens": 100, "completion_tokens": 7, "seconds": 31.0}))
    return path


def test_who_will_answer_is_told_before_the_request_is_sent(tmp_path: Path) -> None:
    """The status line must not show a reading estimate for a call the memo or a recording answers (it flashed)."""
    inner = CountingLLM()
    assert answered_at_once(inner, MESSAGES, None, 512) is None  # a plain model: the model answers
    recorded = tmp_path / "bundled"
    _record(recorded, "m", "Sicily")
    llm = MemoLLM(CachedLLM(inner, tmp_path / "user", "auto", read_dirs=[recorded]))
    assert answered_at_once(llm, MESSAGES, None, 512) == "record"
    assert answered_at_once(llm, MESSAGES, None, 64) is None  # another request: not recorded
    assert llm.complete(MESSAGES, max_tokens=512).source == "record"
    assert answered_at_once(llm, MESSAGES, None, 512) == "memo"  # now the process has it
    assert inner.calls == 0
    assert llm.complete(MESSAGES, max_tokens=64).source == "model"  # as told
    assert answered_at_once(CachedLLM(inner, recorded, "record"), MESSAGES, None, 512) is None  # record asks anew


def test_recorded_else_live_serves_the_bundled_answer_and_records_new_ones_only_in_the_user_cache(
        tmp_path: Path) -> None:
    bundled, user = tmp_path / "bundled", tmp_path / "user"
    _record(bundled, "m", "recorded answer")
    before = sorted(p.name for p in bundled.iterdir())
    live = CountingLLM()
    llm = CachedLLM(live, user, "auto", read_dirs=(bundled,))
    hit = llm.complete(MESSAGES)
    assert (hit.text, hit.source, hit.prompt_tokens, hit.seconds) == ("recorded answer", "record", 100, 31.0)
    assert live.calls == 0
    new_question = [{"role": "user", "content": "A question nobody recorded?"}]
    pieces: list[str] = []
    fresh = llm.complete(new_question, on_text=pieces.append)
    assert live.calls == 1 and fresh.source == "model" and "".join(pieces).strip() == fresh.text
    assert sorted(p.name for p in bundled.iterdir()) == before  # the bundled recordings are never written
    assert [p.name for p in user.iterdir()] == [f"{cache_key('m', new_question, None, 512)}.json"]
    assert llm.complete(new_question).source == "record" and live.calls == 1  # now recorded: served


def test_auto_is_the_default_and_builds_a_lazy_live_model(tmp_path: Path, monkeypatch) -> None:
    for var in ("GEAR_LLM", "GEAR_LLM_BASE_URL", "OPENAI_API_KEY", "GEAR_PROMPTS"):
        monkeypatch.delenv(var, raising=False)
    # the process's shared model may already be loaded by an earlier test in this process: start from none
    monkeypatch.setattr("gear.llm.embedded._shared", {})
    settings = Settings(_env_file=None)
    assert settings.llm == "auto" and settings.live_llm == "local" and settings.prompt_profile == "paper"
    llm = make_llm(settings.with_(llm_cache_dir=tmp_path / "user", llm_bundled_cache=tmp_path / "bundled"))
    assert isinstance(llm, CachedLLM) and llm.read_dirs == (tmp_path / "bundled",)
    from gear.llm.embedded import EmbeddedLLM

    assert isinstance(llm.inner, EmbeddedLLM) and llm.inner._server is None  # nothing found or started until a miss
    api = Settings(_env_file=None, llm_base_url="http://127.0.0.1:1/v1")
    assert api.live_llm == "openai" and api.prompt_profile == "paper"
    assert Settings(_env_file=None, prompts="small").prompt_profile == "small"
    assert Settings(_env_file=None, llm="replay").live_llm is None
