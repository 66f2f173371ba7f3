"""Settings are grouped by role (as ColBERT's config is) but read flat: every field sits in exactly one group, keeps
its GEAR_* variable, and dumps in the order traces have always recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from gear import config
from gear.config import Settings, public_settings

GROUPS = [base for base in Settings.__mro__[1:] if issubclass(base, BaseModel) and base.__module__ == config.__name__]


def test_every_field_sits_in_exactly_one_group() -> None:
    owners: dict[str, list[str]] = {}
    for group in GROUPS:
        for name in group.__annotations__:
            if name in Settings.model_fields:
                owners.setdefault(name, []).append(group.__name__)
    assert len(GROUPS) >= 7
    assert set(owners) == set(Settings.model_fields)
    assert {name: groups for name, groups in owners.items() if len(groups) != 1} == {}


def test_fields_dump_in_reading_order() -> None:
    """Search first, Elasticsearch last: a trace's recorded settings read as they always did."""
    names = list(public_settings(Settings(_env_file=None)))
    assert names[0] == "backend" and names[-1] == "es_timeout"
    assert names.index("beam_width") < names.index("max_iterations") < names.index("ppr_damping")
    assert names.index("ircot_ranking") < names.index("prompts") < names.index("llm") < names.index("es_url")


@pytest.mark.parametrize(("variable", "field", "value"), [
    ("GEAR_RETRIEVER", "retriever", "bm25"),
    ("GEAR_BEAM_WIDTH", "beam_width", 3),
    ("GEAR_MAX_ITERATIONS", "max_iterations", 2),
    ("GEAR_PPR_DAMPING", "ppr_damping", 0.7),
    ("GEAR_IRCOT_MAX_STEPS", "ircot_max_steps", 6),
    ("GEAR_LLM_MODEL", "llm_model", "m"),
    ("GEAR_LLM_PARALLEL", "llm_parallel", 2),
    ("GEAR_LLM_TIMEOUT", "llm_timeout", 7.0),
    ("GEAR_ES_PREFIX", "es_prefix", "p"),
])
def test_each_group_reads_its_gear_variables(monkeypatch: pytest.MonkeyPatch, variable: str, field: str,
                                             value: object) -> None:
    monkeypatch.setenv(variable, str(value))
    settings = Settings(_env_file=None)
    assert getattr(settings, field) == value
    assert getattr(settings.with_(expand="naive"), field) == value  # a copy keeps it


def test_a_group_validates_as_before() -> None:
    """Validators and derived values moved with their group: γ follows b, the method name is checked."""
    assert Settings(_env_file=None, beam_width=4).effective_gamma == 8.0
    with pytest.raises(ValueError, match="unknown embedder"):
        Settings(_env_file=None, embedder="bert")
    with pytest.raises(ValueError, match="beam_width"):
        Settings(_env_file=None).with_(beam_width=0)


def test_the_method_is_called_method_and_its_old_name_still_reads(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """`expand` named the method although PPR and IRCoT expand nothing: the keyword, the GEAR_ variable, `.env` and
    the settings recorded in older traces and reports still say it, and each is read as `method`."""
    assert "method" in Settings.model_fields and "expand" not in Settings.model_fields
    assert "expand" not in public_settings(Settings(_env_file=None)) and \
        public_settings(Settings(_env_file=None, method="ppr"))["method"] == "ppr"
    assert Settings(_env_file=None, expand="ppr").method == "ppr"
    assert Settings(_env_file=None).with_(expand="ircot").method == "ircot"
    assert Settings.model_validate({"expand": "sync"}).method == "sync"  # a recorded trace's settings
    assert Settings.model_validate({"expand": "sync", "method": "gear"}).method == "gear"  # the new name wins
    with pytest.raises(ValueError, match="unknown method 'beam'"):
        Settings(_env_file=None, expand="beam")
    monkeypatch.setenv("GEAR_EXPAND", "naive")
    assert Settings(_env_file=None).method == "naive"
    assert Settings(_env_file=None, method="gear").method == "gear"  # a keyword outranks every variable
    assert Settings(_env_file=None, expand="gear").method == "gear"  # the old keyword too
    monkeypatch.setenv("GEAR_METHOD", "ppr")
    assert Settings(_env_file=None).method == "ppr"  # the new variable outranks the old
    monkeypatch.delenv("GEAR_METHOD")
    monkeypatch.setenv("GEAR_EXPAND", "")
    assert Settings(_env_file=None).method == "none"  # set empty: unset
    monkeypatch.delenv("GEAR_EXPAND")
    env = tmp_path / ".env"
    env.write_text("GEAR_EXPAND=sync\n", encoding="utf-8")
    assert Settings(_env_file=env).method == "sync"
    monkeypatch.setenv("GEAR_METHOD", "naive")
    assert Settings(_env_file=env).method == "naive"  # a variable outranks .env, old name or new
    monkeypatch.delenv("GEAR_METHOD")
    env.write_text("GEAR_EXPAND=sync\nGEAR_METHOD=ircot\n", encoding="utf-8")
    assert Settings(_env_file=env).method == "ircot"


@pytest.mark.parametrize("variable", ["GEAR_LLM_CACHE_DIR", "GEAR_LLM_BUNDLED_CACHE", "GEAR_LLM_MODEL",
                                      "GEAR_LLM_BASE_URL"])
def test_a_variable_set_empty_is_unset(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    """`GEAR_LLM_CACHE_DIR=` once made answers land in the current folder (Path("") is ".")."""
    monkeypatch.setenv(variable, "")
    settings = Settings(_env_file=None)
    field = variable.removeprefix("GEAR_").lower()
    assert getattr(settings, field) is None
    monkeypatch.setenv("GEAR_LLM_CACHE_DIR", "/tmp/answers")
    assert Settings(_env_file=None).llm_cache_dir == Path("/tmp/answers")


def test_with_keeps_an_explicit_none_and_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    """`with_(prompts=None)` clears a chosen profile (callers once used `model_copy`, which validates nothing); a value
    the field refuses is refused there too."""
    chosen = Settings(_env_file=None).with_(prompts="paper", llm_model="m")
    cleared = chosen.with_(prompts=None, llm_model=None)
    assert (chosen.prompts, cleared.prompts, cleared.llm_model) == ("paper", None, None)
    with pytest.raises(ValidationError):
        chosen.with_(beam_width=None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")  # a knob read under another name
    keyed = Settings(_env_file=None)
    assert keyed.with_(llm_api_key=None).llm_api_key is None
    assert keyed.with_(method="gear").llm_api_key == keyed.llm_api_key
