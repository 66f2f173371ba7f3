"""The embedded model (llama.cpp's llama-server, started by gear on first use) really answers the paper's reader and
reasoning prompts in a parseable way.

Skipped when llama-server or the model parts are missing, unless GEAR_REQUIRE_LOCAL_LLM=1 (CI), where a missing
model must fail the build instead of silently skipping.
"""

from __future__ import annotations

import os
import time

import pytest

from gear.llm.base import LLMError
from gear.parsing import parse_reasoning, parse_triples
from gear.prompts import format_docs, reader_prompt, reasoning_prompt

pytestmark = [pytest.mark.slow, pytest.mark.llm]

# Copied from the walkthrough corpus (the paper's Figure 1 example); tests do not read ../shared.
PASSAGES = [
    (
        "Bremen Cathedral",
        "Bremen Cathedral (), dedicated to St. Peter, is a church situated in the market square in the center of "
        "Bremen, in northern Germany. The cathedral belongs to the Bremian Evangelical Church, a member of the "
        "Protestant umbrella organization named Evangelical Church in Germany. It is the previous cathedral of the "
        "former Prince-Archbishopric of Bremen. Since 1973, it is protected by the monument protection act.",
    ),
    (
        "St. Peter's Basilica",
        "The Papal Basilica of St. Peter in the Vatican (Italian: Basilica Papale di San Pietro in Vaticano), or "
        "simply St. Peter's Basilica (Latin: Basilica Sancti Petri), is an Italian Renaissance church in Vatican "
        "City, the papal enclave within the city of Rome.",
    ),
    (
        "Governor of Vatican City",
        "The post of Governor of Vatican City (Governatore dello Stato della Città del Vaticano in Italian) was held "
        "by Marchese Camillo Serafini from the foundation of the state in 1929 until his death in 1952. No successor "
        "was appointed, and the post itself was not mentioned in the Fundamental Law of Vatican City State issued by "
        "Pope John Paul II on 26 November 2000, which entered into force on 22 February 2001.",
    ),
]
QUESTION = (
    "When did the location of the basilica which is named for the same saint that the Bremen Cathedral is named for "
    "become a country?"
)


@pytest.fixture(scope="module")
def llm(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from gear.llm.embedded import EmbeddedLLM
    from gear.llm.llama_server import find_binary
    from gear.llm.model_files import ensure_model

    try:
        find_binary()
        path = ensure_model()
    except LLMError as exc:
        if os.environ.get("GEAR_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail(f"GEAR_REQUIRE_LOCAL_LLM=1 but {exc}")
        pytest.skip(str(exc))
    saved = os.environ.get("GEAR_CACHE_DIR")
    os.environ["GEAR_CACHE_DIR"] = str(tmp_path_factory.mktemp("gear-cache"))  # a server of this module's own
    model = EmbeddedLLM(model_path=path)
    started = time.perf_counter()
    model.ensure_loaded()
    print(f"\nllama-server started and the model loaded in {time.perf_counter() - started:.2f} s")
    try:
        yield model
    finally:
        model.server.stop()
        if saved is None:
            os.environ.pop("GEAR_CACHE_DIR", None)
        else:
            os.environ["GEAR_CACHE_DIR"] = saved


def _rate(label: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
    print(
        f"{label}: {prompt_tokens} prompt + {completion_tokens} generated tokens in {seconds:.2f} s "
        f"({(prompt_tokens + completion_tokens) / seconds:.1f} tokens/s overall)"
    )


def test_reader_finds_the_saint(llm) -> None:  # type: ignore[no-untyped-def]
    prompt = reader_prompt(format_docs(PASSAGES), QUESTION, None)
    result = llm.complete([{"role": "user", "content": prompt}], max_tokens=256)
    _rate("reader", result.prompt_tokens, result.completion_tokens, result.seconds)
    parsed = parse_triples(result.text)
    assert parsed.triples, result.text
    assert any("Peter" in part for triple in parsed.triples for part in triple), result.text
    assert result.prompt_tokens > 100 and result.completion_tokens > 0


def test_reader_with_memory_and_reasoning_parse(llm) -> None:  # type: ignore[no-untyped-def]
    memory = [
        ("Bremen Cathedral", "dedicated to", "St. Peter"),
        ("St. Peter's Basilica", "located in", "Vatican City"),
        ("Vatican City", "founded in", "1929"),
    ]
    read = llm.complete([{"role": "user", "content": reader_prompt(format_docs(PASSAGES), QUESTION, memory)}])
    _rate("reader+memory", read.prompt_tokens, read.completion_tokens, read.seconds)
    assert isinstance(parse_triples(read.text).triples, list)
    result = llm.complete([{"role": "user", "content": reasoning_prompt(QUESTION, memory)}], max_tokens=128)
    _rate("reasoning", result.prompt_tokens, result.completion_tokens, result.seconds)
    verdict = parse_reasoning(result.text)
    assert not any("no 'Answerable" in w for w in verdict.warnings), result.text
    if verdict.answerable:
        assert verdict.answer


def test_json_schema_output_parses(llm) -> None:  # type: ignore[no-untyped-def]
    schema = {
        "type": "object",
        "properties": {
            "triples": {
                "type": "array",
                "maxItems": 8,
                "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
            }
        },
        "required": ["triples"],
    }
    prompt = reader_prompt(format_docs(PASSAGES[:1]), "Which saint is Bremen Cathedral dedicated to?", None)
    result = llm.complete(
        [{"role": "user", "content": prompt + '\nAnswer as JSON: {"triples": [["subject", "predicate", "object"]]}'}],
        json_schema=schema,
        max_tokens=200,
    )
    _rate("json", result.prompt_tokens, result.completion_tokens, result.seconds)
    parsed = parse_triples(result.text)
    assert parsed.triples, result.text
