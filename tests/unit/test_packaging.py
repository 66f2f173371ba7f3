"""The declared dependency ranges (pyproject.toml) and the exact pins the README's two commands install
(requirements.txt, requirements-dev.txt, torch in the Makefile) agree: every pin lies inside its range, every
package the library declares is pinned, and every pin is declared or pulled in by a declared package."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]


def _declared(*groups: str) -> dict[str, Requirement]:
    lines = [line for g in groups for line in (PROJECT["dependencies"] if g == "core" else EXTRAS[g])]
    return {canonicalize_name(r.name): r for r in map(Requirement, lines)}


def _pins(*files: str) -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for name in files:
        for number, raw in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            match = re.fullmatch(r"([A-Za-z0-9._-]+)==([^\s;]+)", line)
            assert match, f"{name}:{number}: {raw!r} is not an exact pin (name==version)"
            pins[canonicalize_name(match[1])] = Version(match[2])
    return pins


def _makefile_torch() -> Version:
    found = re.findall(r"\btorch==([0-9][^\s]*)", (ROOT / "Makefile").read_text(encoding="utf-8"))
    assert found, "the Makefile installs torch==X before requirements.txt"
    return Version(found[0])


RUNTIME = _declared("core", "app", "elasticsearch")
ALL = _declared("core", "app", "elasticsearch", "dev")
PINS = {**_pins("requirements.txt", "requirements-dev.txt"), "torch": _makefile_torch()}


def test_the_library_declares_its_dependencies() -> None:
    core = _declared("core")
    for needed in ("numpy", "torch", "sentence-transformers", "bm25s", "pydantic-settings", "typer", "openai"):
        assert needed in core, f"{needed} is imported by the engine or the CLI but not declared"
    assert set(EXTRAS) == {"app", "elasticsearch", "dev"}
    assert "streamlit" in EXTRAS["app"][0] and not any("streamlit" in r for r in PROJECT["dependencies"])
    assert all(str(r.specifier) for r in ALL.values()), "every dependency is a range, not a bare name"


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_pin_lies_inside_its_range(name: str) -> None:
    if name not in PINS:
        pytest.skip(f"{name} is declared but no README command installs it")
    assert ALL[name].specifier.contains(PINS[name], prereleases=True), (
        f"{name}=={PINS[name]} is pinned but pyproject.toml declares {ALL[name]}")


def test_every_runtime_dependency_is_pinned_for_the_readme_commands() -> None:
    runtime_pins = {**_pins("requirements.txt"), "torch": _makefile_torch()}
    assert sorted(set(RUNTIME) - set(runtime_pins)) == []


def test_every_dev_pin_is_declared_in_the_dev_extra() -> None:
    dev = _declared("dev")
    assert sorted(set(_pins("requirements-dev.txt")) - set(dev)) == []


def test_every_other_pin_is_pulled_in_by_a_declared_package() -> None:
    """Pins of packages gear does not import (transformers, tqdm) are there to fix the version a declared package
    would pull; a pin that nothing declared needs is a leftover."""
    required_by: dict[str, set[str]] = {}
    for name in ALL:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                required_by.setdefault(canonicalize_name(req.name), set()).add(name)
    leftovers = [name for name in PINS if name not in ALL and name not in required_by]
    assert leftovers == []
