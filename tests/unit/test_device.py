"""GEAR_DEVICE: which torch device the encoder asks for, with torch's availability checks mocked (no GPU needed)."""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path

import pytest
import torch
from pydantic import ValidationError

from gear.config import Settings
from gear.embed import EmbedderError, Encoder
from gear.embed import encoder as encoder_module
from gear.embed.device import DEVICES, choose_device


@pytest.fixture
def gpus(monkeypatch: pytest.MonkeyPatch):
    """Set which accelerators torch reports: gpus(cuda=True, mps=False)."""

    def set_(*, cuda: bool, mps: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)

    return set_


@pytest.mark.parametrize(("cuda", "mps", "expected"), [
    (True, False, "cuda"), (True, True, "cuda"), (False, True, "mps"), (False, False, "cpu"),
])
def test_auto_takes_cuda_then_mps_then_the_cpu(gpus, cuda: bool, mps: bool, expected: str) -> None:
    gpus(cuda=cuda, mps=mps)
    assert choose_device("auto") == expected


def test_an_explicit_device_is_taken_as_asked(gpus) -> None:
    gpus(cuda=True, mps=True)
    assert [choose_device(d) for d in ("cpu", "cuda", "mps")] == ["cpu", "cuda", "mps"]


def test_cpu_does_not_ask_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    def asked() -> bool:
        raise AssertionError("torch asked about a GPU for GEAR_DEVICE=cpu")

    monkeypatch.setattr(torch.cuda, "is_available", asked)
    assert choose_device("cpu") == "cpu"


@pytest.mark.parametrize("device", ["cuda", "mps"])
def test_an_explicit_gpu_that_torch_cannot_see_is_an_error(gpus, device: str) -> None:
    gpus(cuda=False, mps=False)
    with pytest.raises(EmbedderError, match=f"GEAR_DEVICE={device}, but torch .* sees no {device.upper()} device"):
        choose_device(device)


def test_an_unknown_device_is_an_error() -> None:
    with pytest.raises(EmbedderError, match="unknown device 'tpu'"):
        choose_device("tpu")


def test_the_setting_reads_gear_device_and_knows_the_same_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().device == "auto"
    assert typing.get_args(Settings.model_fields["device"].annotation) == DEVICES
    monkeypatch.setenv("GEAR_DEVICE", "cuda")
    assert Settings().device == "cuda"
    monkeypatch.setenv("GEAR_DEVICE", "gpu")
    with pytest.raises(ValidationError, match="device"):
        Settings()


class RecordingModel:
    """Stands in for SentenceTransformer: records the device it was put on."""

    made: typing.ClassVar[list[dict]] = []

    def __init__(self, path: str, device: str, **kwargs) -> None:
        RecordingModel.made.append({"path": path, "device": device, **kwargs})


@pytest.fixture
def recording_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict]:
    RecordingModel.made = []
    monkeypatch.setitem(sys.modules, "sentence_transformers",
                        types.SimpleNamespace(SentenceTransformer=RecordingModel))
    monkeypatch.setattr(encoder_module, "model_path", lambda name: tmp_path / name)
    return RecordingModel.made


@pytest.mark.parametrize(("setting", "cuda", "expected"), [("auto", True, "cuda"), ("auto", False, "cpu"),
                                                         ("cpu", True, "cpu")])
def test_the_encoder_loads_its_model_on_the_chosen_device(gpus, recording_model: list[dict], setting: str,
                                                          cuda: bool, expected: str) -> None:
    gpus(cuda=cuda, mps=False)
    encoder = Encoder("all-MiniLM-L6-v2", device=setting)
    assert encoder.torch_device is None  # nothing loaded, nothing asked, until the model is needed
    assert isinstance(encoder.model, RecordingModel)
    assert [m["device"] for m in recording_model] == [expected]
    assert (encoder.device, encoder.torch_device) == (setting, expected)


def test_the_encoder_reports_a_missing_gpu_before_loading(gpus, recording_model: list[dict]) -> None:
    gpus(cuda=False, mps=False)
    with pytest.raises(EmbedderError, match="GEAR_DEVICE=cuda"):
        _ = Encoder("all-MiniLM-L6-v2", device="cuda").model
    assert recording_model == []
