"""Every knob in one object, read from GEAR_* environment variables or a .env file and overridable per call."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from gear import methods
from gear.types import Retriever

#: the default of Settings.extraction_stop_repeats and gear.extract.runner.ExtractionConfig.stop_repeats (the loop
#: guard of gear.extract.repeats): measured, 2 repeats in a row lost no triple on the 20-passage set, 1 lost one
STOP_REPEATS = 2

#: renamed knobs, old name → new: the old names stay readable (keyword, GEAR_ variable, .env, recorded settings)
OLD_NAMES = {"expand": "method"}  # `expand` named the method although PPR and IRCoT expand nothing

GistRead = Literal["fused", "expanded"]
PromptProfile = Literal["paper", "small"]
LLMKind = Literal["auto", "local", "openai", "replay", "record"]

#: answers recorded with the project (the demo's and the measured runs'); read, never written, by the "auto" LLM
BUNDLED_LLM_CACHE = Path(__file__).resolve().parent.parent / "assets" / "llm_cache"

EMBEDDERS = {
    "minilm": "all-MiniLM-L6-v2",
    "all-MiniLM-L6-v2": "all-MiniLM-L6-v2",
    "mpnet": "all-mpnet-base-v2",
    "all-mpnet-base-v2": "all-mpnet-base-v2",
}


class SearchSettings(BaseModel):
    """What is searched and how: the store, the encoder, the base retriever and the method."""

    backend: Literal["memory", "elasticsearch"] = "memory"
    embedder: str = "all-MiniLM-L6-v2"  # the paper used all-mpnet-base-v2; MiniLM is 7x faster on CPU
    embed_bf16: bool = False
    # where the encoder runs: auto = a CUDA GPU, else Apple's MPS, else the CPU (vectors equal up to float rounding,
    # so the index does not record it; gear/embed/device.py)
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    retriever: Retriever = "hybrid"
    method: str = "none"  # a name registered in gear.methods (base retriever only, NaiveGE, …, IRCoT); was `expand`
    rrf_k: int = Field(60, ge=1)

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        if value not in EMBEDDERS:
            raise ValueError(f"unknown embedder {value!r}; choose one of {sorted(set(EMBEDDERS.values()))}")
        return EMBEDDERS[value]

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        return methods.get(value).name  # an unknown name is an error that lists the registered ones


class BeamSettings(BaseModel):
    """Graph expansion: Diverse Triple Beam Search (Alg. 1) and how its sequences are scored."""

    beam_width: int = Field(10, ge=1)
    beam_length: int = Field(2, ge=1)
    max_neighbours: int = Field(100, ge=1)
    gamma: float | None = Field(None, gt=0)  # None = 2 * beam_width, as in the paper
    diversity: bool = True
    score_mode: Literal["exact", "fast"] = "exact"

    @property
    def effective_gamma(self) -> float:
        return self.gamma if self.gamma is not None else 2.0 * self.beam_width


class AgentSettings(BaseModel):
    """The GeAR agent's loop (and the QA step of every method that answers)."""

    max_iterations: int = Field(4, ge=1)
    agent_k: int = Field(10, ge=1)  # passages retrieved before each read (paper: 10, matching IRCoT)
    passage_link_k: int = Field(5, ge=1)  # k of passageLink; unstated in the paper
    gist_read: GistRead = "fused"
    gist_read_k: int = Field(10, ge=1)
    # the order of passages in a read prompt, which the paper leaves open: retrieval rank (as recorded), or "cache":
    # what the run's previous read showed first, so the model server's prompt cache skips it (gear/prompts/order.py)
    read_order: Literal["rank", "cache"] = "rank"
    qa_top_k: int = Field(5, ge=1)
    answer: bool = True  # generate an answer with the paper's QA prompt (SyncGE and GeAR runs)


class PPRSettings(BaseModel):
    """The peers (docs/peers.md): PPR as HippoRAG 2 (Gutiérrez et al. 2025) runs it; defaults are those of its code
    (OSU-NLP-Group/HippoRAG, src/hipporag/utils/config_utils.py)."""

    ppr_damping: float = Field(0.5, gt=0, lt=1)  # `damping`: probability of following an edge (1 − reset)
    ppr_synonym_threshold: float = Field(0.8, ge=-1, le=1)  # `synonymy_edge_sim_threshold` (cosine of entity names)
    ppr_passage_weight: float = Field(0.05, ge=0)  # `passage_node_weight`: factor on the passages' dense scores
    ppr_seed_triples: int = Field(5, ge=1)  # `linking_top_k`: triples matched to the query (before the filter)
    ppr_seed_entities: int = Field(5, ge=1)  # `linking_top_k` again: the entity seeds kept, by weight
    ppr_filter: bool = False  # the LLM "recognition memory" over the matched triples (on in HippoRAG 2's runs)


class IRCoTSettings(BaseModel):
    """IRCoT (Trivedi et al. 2023): k = agent_k passages per retrieval (the paper's "matching IRCoT")."""

    ircot_max_steps: int = Field(4, ge=1)  # retrievals per question (GeAR's max_iterations; HippoRAG's max_qa_steps)
    ircot_retriever: Literal["base", "ppr"] = "base"  # each retrieval: the base retriever, or PPR as above
    ircot_max_passages: int = Field(15, ge=1)  # paragraphs the reasoner reads at most (IRCoT's cap of 15)
    # final ranking: collected passages in retrieval order (IRCoT), or by best score over the retrievals (HippoRAG's)
    ircot_ranking: Literal["retrieval", "score"] = "retrieval"


class LLMSettings(BaseModel):
    """Which LLM answers and how it is asked: the prompt profile, the model, the endpoint, the recordings."""

    # None = "paper" (the appendix prompts verbatim) for every model: on the measured dev50 subset the paper's prompts
    # beat the small-model profile with the embedded model too (docs/results.md); "small" is a choice
    prompts: PromptProfile | None = None
    # llm: "auto" serves recorded answers and calls the live model (local, or the endpoint when one is set) otherwise
    llm: LLMKind = "auto"
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    llm_cache_dir: Path | None = None  # record/replay cache; for "auto" the user's cache (default ~/.cache/gear/llm)
    llm_bundled_cache: Path | None = BUNDLED_LLM_CACHE if BUNDLED_LLM_CACHE.is_dir() else None
    # the shape of a triple-extraction answer (gear/extract/outputs.py): None = "triples" for the embedded model
    # (fewer tokens written for the same index: docs/results.md), "joint" (the paper's entities and
    # triples) for any other model
    extraction_output: Literal["joint", "triples", "grouped"] | None = None
    # stop the model after this many repeated triples in a row (a small model's repetition loop; 0: never)
    extraction_stop_repeats: int = Field(STOP_REPEATS, ge=0)

    @field_validator("llm_cache_dir", "llm_bundled_cache", "llm_model", "llm_base_url", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`GEAR_LLM_CACHE_DIR=` (set, but empty) means unset — not the current folder, where answers would land."""
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def live_llm(self) -> Literal["local", "openai"] | None:
        """Which live model answers what is not recorded (None: replay only)."""
        if self.llm == "replay":
            return None
        if self.llm == "openai" or (self.llm in ("auto", "record") and (self.llm_base_url or self.llm_api_key)):
            return "openai"
        return "local"

    @property
    def prompt_profile(self) -> PromptProfile:
        """The profile in force: as set, else "paper". The small profile was meant as the embedded model's default,
        but on the measured subset (docs/results.md, 20 dev50 questions) the paper's prompts gave the better EM/F1
        and recall with that model, so the numbers decided."""
        return self.prompts if self.prompts is not None else "paper"


class LlamaServerSettings(BaseModel):
    """The embedded model's llama-server (gear/llm/llama_server.py)."""

    llm_threads: int | None = Field(None, ge=1)  # None = the machine's physical cores
    # slots, micro-batch, batch and flash attention: None = chosen from the build (CPU, CUDA, Metal) and the cores
    # (gear/llm/server_profile.py: 1 slot on a small CPU, where a second slot re-reads what the first has cached and
    # batching buys little; 16 on a CUDA GPU); the context of each slot, the shortest cached chunk re-used when it is
    # not a prefix (0: prefix only), and the layers offloaded to a GPU (None: llama.cpp's default, all that fit,
    # where the set-up built for CUDA or Metal)
    llm_parallel: int | None = Field(None, ge=1, le=64)
    llm_ubatch: int | None = Field(None, ge=16, le=8192)
    llm_batch: int | None = Field(None, ge=16, le=65536)
    llm_flash_attn: bool | None = None
    llm_ctx_per_slot: int = Field(8192, ge=512, le=131072)
    llm_cache_reuse: int = Field(256, ge=0)
    llm_gpu_layers: int | None = Field(None, ge=0)
    # exact mode: every request read whole, never from the prompt cache (llama-server's cache_prompt: false), so the
    # same request gets the same text at temperature 0 each time it is asked afresh, at the cost of re-reading every
    # prompt (docs/results.md, "Reproducibility"); off: a cached head is skipped, and the text may differ
    llm_exact: bool = False


class LLMClientSettings(BaseModel):
    """The client of an OpenAI-compatible server (the embedded one too): seconds to wait for an answer (not retried:
    the same request is as slow again), its retries of refused connections, 5xx and 429, and at most this many calls
    at once from this process (1 for a one-at-a-time llama.cpp server: callers then wait in line and are told their
    place; None = no limit)."""

    llm_timeout: float = Field(120.0, gt=0)
    llm_max_retries: int = Field(3, ge=0, le=10)
    llm_max_concurrent: int | None = Field(None, ge=1)


class LLMGroup(LLMClientSettings, LlamaServerSettings, LLMSettings):
    """The LLM's settings as one group, passed whole to the LLM layer (gear.llm.make_llm, llm_key, answer_stores):
    which model answers, where its recordings are, its server and its client. `MODEL_FIELDS` are those that make the
    model (the others say how the agent prompts it, or are the secret key)."""

    MODEL_FIELDS: ClassVar[tuple[str, ...]] = (
        "llm", "llm_model", "llm_base_url", "llm_cache_dir", "llm_bundled_cache", "llm_threads", "llm_timeout",
        "llm_max_retries", "llm_max_concurrent", "llm_parallel", "llm_ctx_per_slot", "llm_cache_reuse",
        "llm_gpu_layers", "llm_ubatch", "llm_batch", "llm_flash_attn", "llm_exact")


class ElasticsearchSettings(BaseModel):
    """The Elasticsearch backend (gear/store/elastic/; docs/elasticsearch.md)."""

    es_url: str | None = None
    es_api_key: SecretStr | None = None
    es_username: str | None = None
    es_password: SecretStr | None = None
    es_ca_certs: Path | None = None
    es_prefix: str = "gear"
    es_index_type: Literal["int8_hnsw", "hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat"] = "int8_hnsw"
    es_num_candidates: int = Field(100, ge=1)
    es_oversample: int = Field(2, ge=1)  # kNN fetches oversample·k candidates, re-ranked by exact cosine
    es_rescore: bool = True
    es_neighbour_cap: int = Field(10_000, ge=1)
    es_timeout: float = Field(30.0, gt=0)


class Settings(ElasticsearchSettings, LLMGroup, IRCoTSettings, PPRSettings, AgentSettings, BeamSettings, SearchSettings,
               BaseSettings):
    """Every knob, one group per role (as ColBERT's `ColBERTConfig` joins its `RunSettings`, `SearchSettings`, …), read
    flat: `settings.beam_width`, `GEAR_BEAM_WIDTH`. A function that needs one role may take its group's type. Defaults
    are the paper's (App. B) unless a comment says otherwise.

    The groups are listed bottom-up because pydantic collects fields from the last base first: fields are dumped in
    reading order (search, beam, agent, PPR, IRCoT, LLM, Elasticsearch), as traces have always recorded them."""

    model_config = SettingsConfigDict(env_prefix="GEAR_", env_file=".env", extra="ignore", frozen=True)

    def __init__(self, **values: Any) -> None:
        super().__init__(**renamed(values))  # an old name given here outranks every variable, as a new name does

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, OldEnvironmentNames(settings_cls), dotenv_settings, file_secret_settings)

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        return renamed(data) if isinstance(data, dict) else data

    def with_(self, **changes: object) -> Settings:
        """A copy with some knobs changed and validated (settings are frozen so runs cannot alter each other); a
        renamed knob's old name is read as its new one, and an explicit None sets a knob that may be None (a caller
        whose None means "not given", as the CLI's options, leaves it out)."""
        data = self.model_dump()
        data.update(renamed(changes))
        for name, info in Settings.model_fields.items():  # a knob read under another name (the API key) is given so
            if isinstance(info.validation_alias, str) and name in data:  # too: else the environment's value stands
                data[info.validation_alias] = data.pop(name)
        return Settings.model_validate(data)


def renamed(values: dict[str, Any]) -> dict[str, Any]:
    """Settings with the old names of renamed knobs read as the new ones (OLD_NAMES), a new name winning where both
    are given: how `Settings(expand=…)`, `with_(expand=…)`, `.env`'s GEAR_EXPAND and the settings recorded in older
    traces and reports are still read."""
    if not any(old in values for old in OLD_NAMES):
        return values
    out = dict(values)
    for old, new in OLD_NAMES.items():
        if old in out:
            value = out.pop(old)
            out.setdefault(new, value)
    return out


class OldEnvironmentNames(PydanticBaseSettingsSource):
    """GEAR_EXPAND and any other old variable of a renamed knob, read below the new variable (GEAR_METHOD wins)."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        environment = {name.upper(): value for name, value in os.environ.items()}  # as case-insensitive as GEAR_*
        return {new: environment[f"GEAR_{old.upper()}"] for old, new in OLD_NAMES.items()
                if environment.get(f"GEAR_{old.upper()}")}  # set empty: unset


SECRET_FIELDS = frozenset({"llm_api_key", "es_api_key", "es_password", "es_username"})


def public_settings(s: Settings) -> dict[str, object]:
    """Settings as written into traces, reports and exports: the one rule for secrets is that these fields are never
    written (credentials and the user name that goes with them); γ is recorded as used."""
    data = s.model_dump(mode="json", exclude=set(SECRET_FIELDS))
    data["gamma"] = s.effective_gamma
    data["prompts"] = s.prompt_profile
    return data
