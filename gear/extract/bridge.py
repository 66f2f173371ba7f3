"""Bridge from `gear index` (and the app) to LLM triple extraction: the configured LLM, a work directory beside the
index, a cost estimate, a rich progress bar, and the summary kept in the index manifest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gear.data.corpus import Document
from gear.data.reading import InputError
from gear.extract import outputs
from gear.extract.outputs import OutputName
from gear.extract.progress import Pace, Progress
from gear.extract.runner import (
    ExtractionConfig,
    ExtractionProgress,
    ExtractionResult,
    Style,
    estimate_prompt_tokens,
    extract_passages,
)
from gear.llm import LLM, llm_from_settings
from gear.llm.queue import current_listener, listening
from gear.llm.server_profile import ServerProfile

LOCAL_OUTPUT: OutputName = "triples"  # the embedded model's default shape (see output_for)

# Tokens written per passage assumed by the cost estimate, per answer shape (measured on the 20-passage set with the
# embedded model, loop guard on: docs/results.md)
EST_COMPLETION_TOKENS = {"joint": 280, "triples": 150, "grouped": 150}


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """How `gear index` runs extraction (none of these change the extracted triples except style/schema/grounding
    and the output shape)."""

    work_dir: Path | None = None
    concurrency: int | None = None  # None: as many as the embedded server has slots; 4 for remote endpoints
    price_in: float | None = None  # USD per 1M prompt tokens
    price_out: float | None = None  # USD per 1M completion tokens
    style: Style | None = None  # None: "one-shot" (all backends: it makes the answer parse)
    use_schema: bool = True
    require_grounded: bool = False
    max_triples: int | None = None
    output: OutputName | None = None  # None: settings.extraction_output, else output_for(settings)


def default_work_dir(out_dir: Path) -> Path:
    """INDEX_DIR.extract/ beside the index: survives rebuilding the index, never inside it."""
    out_dir = Path(out_dir)
    return out_dir.parent / f"{out_dir.name}.extract"


def is_remote(settings: Any) -> bool:
    return settings.live_llm == "openai"


def output_for(settings: Any) -> OutputName:
    """The answer's shape: as set, else the lean "triples" for the embedded model (fewer tokens written for an index
    as good: docs/results.md) and the paper's "joint" for any other model."""
    if settings.extraction_output is not None:
        return settings.extraction_output  # type: ignore[no-any-return]  # a validated OutputName
    return LOCAL_OUTPUT if settings.live_llm == "local" else "joint"


def local_profile(settings: Any) -> ServerProfile:
    """The embedded server's slots and the rest, as settings and the build choose them (reads a stamp file)."""
    from gear.llm.embedded import server_profile

    return server_profile(parallel=settings.llm_parallel, ubatch=settings.llm_ubatch, batch=settings.llm_batch,
                          flash_attn=settings.llm_flash_attn)


def config_for(settings: Any, options: ExtractOptions) -> ExtractionConfig:
    """Extraction as configured: one request per slot of the embedded server at once (as many as it answers
    together), 4 at a remote endpoint, unless --concurrency says otherwise."""
    concurrency = options.concurrency or (4 if is_remote(settings) else local_profile(settings).parallel)
    defaults = ExtractionConfig()
    return ExtractionConfig(
        style=options.style or defaults.style,
        use_schema=options.use_schema,
        max_triples=options.max_triples or defaults.max_triples,
        require_grounded=options.require_grounded,
        concurrency=concurrency,
        output=options.output or output_for(settings),
        stop_repeats=settings.extraction_stop_repeats,
    )


def cost_estimate(docs: list[Document], config: ExtractionConfig, price_in: float | None, price_out: float | None
                  ) -> tuple[int, int, float | None]:
    """(prompt tokens, completion tokens, USD or None without prices) for extracting `docs` from scratch."""
    prompt = estimate_prompt_tokens([(d.title, d.text) for d in docs], config)
    completion = EST_COMPLETION_TOKENS[config.output] * len(docs)
    if price_in is None and price_out is None:
        return prompt, completion, None
    return prompt, completion, (prompt * (price_in or 0) + completion * (price_out or 0)) / 1e6


class PartsLine:
    """A rich renderable of a progress line that wraps between its " · " parts, never inside one ("≈ | 36 s left")."""

    SEPARATOR = " · "

    def __init__(self, text: str) -> None:
        parts = text.split(self.SEPARATOR) if text else []
        self.tokens = [part + self.SEPARATOR.rstrip() for part in parts[:-1]] + parts[-1:]  # "4 / 12 passages ·"

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.cells import cell_len
        from rich.measure import Measurement

        return Measurement(max((cell_len(t) for t in self.tokens), default=0), cell_len(" ".join(self.tokens)))

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.cells import cell_len
        from rich.text import Text

        lines: list[str] = []
        for token in self.tokens:
            if lines and cell_len(f"{lines[-1]} {token}") <= options.max_width:
                lines[-1] = f"{lines[-1]} {token}"
            else:
                lines.append(token)
        yield Text("\n".join(lines), overflow="fold")


def run_extraction(docs: list[Document], llm: LLM, work_dir: Path, config: ExtractionConfig,
                   console: Any = None) -> ExtractionResult:
    """Extract with a rich progress bar when `console` is given: passages done / total, passages per minute and the
    time left (this run's recent passages: gear.extract.progress), the triples so far and the tokens."""
    passages = [(d.title, d.text) for d in docs]
    if console is None:
        return extract_passages(passages, llm, work_dir, config)
    from rich import progress as rp
    from rich.table import Column

    # the line takes what the bar leaves, wrapped between its parts in a narrow terminal (cut to fit, it lost the bar
    # and the time)
    line = rp.RenderableColumn(PartsLine(""), table_column=Column(ratio=1))
    pace = Pace()
    tokens = [""]  # the last result's tokens and failures, shown after the line
    outer = current_listener()
    try:
        with rp.Progress(rp.TextColumn("extracting"), rp.BarColumn(bar_width=20), line, rp.TimeElapsedColumn(),
                         console=console, transient=False) as bar:
            task = bar.add_task("extracting", total=len(passages))

            def show(progress: Progress) -> None:
                line.renderable = PartsLine(progress.line() + tokens[0])
                bar.update(task, completed=progress.done, total=progress.total)

            def update(result: ExtractionResult, done: int, total: int) -> None:
                tokens[0] = (f" · {result.prompt_tokens + result.completion_tokens:,} tokens"
                             + (f" · {result.failed} failed" if result.failed else ""))
                show(pace.update(done, total, result.n_triples))

            def heartbeat(ahead: int) -> None:  # while the model reads or writes: a stall shows before it ends
                if outer is not None:
                    outer(ahead)
                again = pace.again()
                if again is not None:
                    show(again)

            with listening(heartbeat):
                return extract_passages(passages, llm, work_dir, config, progress=update)
    except KeyboardInterrupt:  # Ctrl-C ended the run without a word
        kept = pace.last[0] if pace.last else 0
        console.print(f"interrupted: {kept:,} of {len(passages):,} passages are kept in the journal ({work_dir}); run "
                      "the same command again to go on from there", highlight=False)
        raise


def extract_for_index(docs: list[Document], settings: Any, out_dir: Path, console: Any,
                      options: ExtractOptions | None = None, llm: LLM | None = None,
                      progress: ExtractionProgress | None = None,
                      on_text: Callable[[str], None] | None = None) -> tuple[list, dict]:
    """Triples for each document (aligned to `docs`) and the extraction summary for the manifest.

    `console` (a rich Console, or None for silence) gets the cost estimate, a progress bar and a summary; a
    `progress(result_so_far, done, total)` callback (e.g. a Streamlit progress bar) replaces the rich bar, and
    `on_text` then hears each answer as it is written (when calls run one at a time).
    Raises InputError when passages failed (the journal keeps every finished one: re-running resumes).
    """
    options = options or ExtractOptions()
    config = config_for(settings, options)
    work_dir = Path(options.work_dir) if options.work_dir else default_work_dir(out_dir)
    llm = llm or llm_from_settings(settings)
    if console is not None:
        prompt, completion, usd = cost_estimate(docs, config, options.price_in, options.price_out)
        line = (f"extracting triples from {len(docs)} passages with {settings.llm} model {llm.model} "
                f"(it writes {outputs.get(config.output).label}, {config.concurrency} at once; journal {work_dir}); "
                f"from scratch "
                f"≈{prompt:,} prompt + ≈{completion:,} completion tokens")
        if usd is not None:
            line += f", ≈${usd:.2f}" if usd >= 0.01 else f", ≈${usd:.4f}"
            line += f" at ${options.price_in or 0}/${options.price_out or 0} per 1M tokens (in/out)"
        console.print(line, highlight=False)
        if settings.live_llm == "local":
            console.print(local_profile(settings).describe(), highlight=False)
    if progress is not None:
        result = extract_passages([(d.title, d.text) for d in docs], llm, work_dir, config, progress=progress,
                                  on_text=on_text)
    else:
        result = run_extraction(docs, llm, work_dir, config, console)
    info = result.info(llm.model, config)
    info["llm"] = settings.live_llm if settings.llm == "auto" else settings.llm  # who answered what was new
    info["work_dir"] = str(work_dir)
    if options.price_in is not None or options.price_out is not None:
        info["usd"] = round((info["prompt_tokens"] * (options.price_in or 0)
                             + info["completion_tokens"] * (options.price_out or 0)) / 1e6, 4)
    if console is not None:
        d = result.dropped
        console.print(
            f"extraction: {result.calls} LLM calls, {result.reused} passages reused from the journal, "
            f"{result.n_triples} triples; dropped {d.malformed} malformed, {d.duplicates} duplicate, {d.too_long} "
            f"over-long" + (f", {d.ungrounded} ungrounded" if config.require_grounded else "") + " triples",
            highlight=False,
        )
    if result.failed:
        shown = "; ".join(result.errors[:3])
        raise InputError(f"{result.failed} of {len(docs)} passages failed extraction ({shown}); finished passages are "
                         f"saved in {work_dir}: re-run the same command to retry only the failed ones")
    return result.triples, info
