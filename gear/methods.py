"""The methods an engine can run, each described once: its name, how the app, the reports and the CLI call it,
whether it asks an LLM or iterates, the settings it reads, where its runner lives and which diagnosis follows its runs.

Everything that lists methods reads this registry — the settings (which names are valid), the engine (which runner
to call), the evaluation report (multi-step or not), the diagnosis (which stages a run has), the charts and the trace
view (labels), the sidebar (choices and presets) and the CLI's help — so adding a method is one runner module under
gear/agent/methods/ (listed in that package's RUNNERS) and one `Method(…)` line in METHODS below. The record sits at
the bottom of the package tree (it imports nothing of gear) so that configuration, evaluation and pictures can read it
without importing the engine; so it names its runner and its diagnosis family, which live above it, and the layers
that own them hold the objects, imported statically: gear.agent.methods.RUNNERS (runner module → its `run`) and
gear.diagnosis.registry (family name → Family).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: the knobs of Diverse Triple Beam Search and the fusion after it (NaiveGE, SyncGE, GeAR)
BEAM_SETTINGS = ("beam_width", "beam_length", "max_neighbours", "gamma", "diversity", "score_mode", "rrf_k")
#: the knobs of the paper's QA step over the final ranking (methods that answer)
QA_SETTINGS = ("answer", "qa_top_k")
#: the knobs of PPR, HippoRAG 2 style (docs/peers.md)
PPR_SETTINGS = ("ppr_damping", "ppr_synonym_threshold", "ppr_passage_weight", "ppr_seed_triples", "ppr_seed_entities",
                "ppr_filter")


#: the recall cut-offs a run is shown at, wherever one question is shown (R@5, R@10, R@15: the paper's)
CUTOFFS: tuple[int, ...] = (5, 10, 15)
#: how many passages a single-step method retrieves wherever one question is run — Ask, Compare, `gear ask`,
#: `Engine.retrieve` — and an evaluation at the default cut-offs: the largest cut-off shown. A shallower list is not
#: the top of a deeper one (hybrid fuses BM25's and dense's lists read to this depth, NaiveGE starts from every
#: triple of these passages, SyncGE's reader reads them), so one depth makes a question's R@5 one number on every
#: page. Multi-step methods retrieve agent_k passages at each step instead, whatever the depth.
DEPTH: int = max(CUTOFFS)


def setting(settings: Mapping[str, Any] | object, key: str) -> Any:
    """One knob of a run's settings, given as Settings or as the dict a trace records (RunStarted.settings)."""
    return settings.get(key) if isinstance(settings, Mapping) else getattr(settings, key, None)


def _never(settings: Mapping[str, Any] | object) -> bool:
    return False


def _always(settings: Mapping[str, Any] | object) -> bool:
    return True


def _ircot_on_ppr(settings: Mapping[str, Any] | object) -> bool:
    return setting(settings, "ircot_retriever") == "ppr"


def _as_set(retriever: str, settings: Mapping[str, Any] | object) -> str:
    return retriever


@dataclass(frozen=True)
class Method:
    """One retrieval method, as everything outside its runner needs to know it."""

    name: str  # the value of Settings.method (`--method`; `--expand` before), recorded as RunStarted.method
    label: str  # what a run is called in the trace view ("method **GeAR**")
    choice: str  # the sidebar's expansion list
    report_name: str  # after the retriever in an evaluation's name: "Hybrid" + " GeAR", "Hybrid" + " + NaiveGE"
    presets: tuple[tuple[str, str], ...]  # (label, retriever) pairs the Compare and Evaluate pages offer
    runner: str  # its runner's module in gear/agent/methods/ (gear.agent.methods.RUNNERS); a gear.agent.context.Runner
    settings: tuple[str, ...]  # the Settings fields its run reads (the LLM's own configuration aside)
    needs_llm: bool = False  # every run asks an LLM
    llm_setting: str = ""  # ... or only when this boolean setting is on (PPR's recognition filter)
    multi_step: bool = False  # iterates with agent_k passages per retrieval: one run serves every recall cut-off
    answers: bool = False  # answers with the paper's QA prompt over the final ranking (when settings.answer)
    peer: bool = False  # one of the peers (docs/peers.md), not a method of the paper
    cli_note: str = ""  # a few words after its name in the CLI's --method help
    base_note: str = ""  # what its base list is, under the trace view's base retrieval
    uses_ppr: Callable[[Mapping[str, Any] | object], bool] = _never  # runs PPR (its first run builds the graph)
    retriever_shown: Callable[[str, Mapping[str, Any] | object], str] = _as_set  # the retriever, as a run shows it
    diagnosis: str = ""  # the name of the gear.diagnosis Family that follows gold passages through its runs
    steps_setting: str = ""  # the setting that caps its iterations (a live run's status line: "of up to N")
    #: (prompt, completion) tokens one question costs when its LLM answers live, for the expected time of a live run
    #: (gear.llm.speed): for GeAR and IRCoT the means per question of the recorded dev50 subset's reports
    #: (docs/evals/dev50_every2_n20_*.json: tokens_per_question_detail), for SyncGE and PPR's filter the medians of
    #: their recorded calls (assets/llm_cache), as each line says
    typical_tokens: tuple[int, int] = (0, 0)

    def uses_llm(self, settings: Mapping[str, Any] | object) -> bool:
        """Whether a run with these settings asks an LLM (the engine creates it only then)."""
        return self.needs_llm or bool(self.llm_setting and setting(settings, self.llm_setting))


METHODS: tuple[Method, ...] = (
    Method("none", "base retriever only", "none (base retriever only)", "",
           (("BM25", "bm25"), ("Dense", "dense"), ("Hybrid", "hybrid")),
           "base", ("retriever",), diagnosis="base"),
    Method("naive", "NaiveGE", "NaiveGE", " + NaiveGE", (("Hybrid + NaiveGE", "hybrid"),),
           "naive", ("retriever", *BEAM_SETTINGS), diagnosis="NaiveGE"),
    Method("sync", "SyncGE", "SyncGE", " + SyncGE", (("Hybrid + SyncGE", "hybrid"),),
           "sync", ("retriever", "prompts", "read_order", *BEAM_SETTINGS, *QA_SETTINGS),
           needs_llm=True, answers=True, diagnosis="SyncGE",
           typical_tokens=(2860, 34)),  # one read and the QA step: the recorded medians of each (assets/llm_cache)
    Method("gear", "GeAR", "GeAR (multi-step)", " GeAR", (("GeAR (hybrid)", "hybrid"),),
           "gear", ("retriever", "prompts", *BEAM_SETTINGS, "max_iterations", "agent_k", "passage_link_k",
                    "gist_read", "gist_read_k", "read_order", *QA_SETTINGS),
           needs_llm=True, multi_step=True, answers=True, diagnosis="GeAR",
           steps_setting="max_iterations", typical_tokens=(7444, 158)),
    # PPR's dense parts use the dense encoder whatever the retriever: its preset says "dense"
    Method("ppr", "PPR (HippoRAG 2 style)", "PPR, HippoRAG 2 style (no LLM)", " + PPR",
           (("PPR (HippoRAG 2)", "dense"),), "ppr", PPR_SETTINGS,
           llm_setting="ppr_filter", peer=True, cli_note="HippoRAG 2-style PageRank, no LLM",
           base_note="The dense top k: every passage's dense score seeds its node in the PPR graph.", uses_ppr=_always,
           retriever_shown=lambda retriever, settings: "dense (PPR's fact matching and passage seeds)",
           diagnosis="PPR", typical_tokens=(222, 15)),  # with the filter on
    Method("ircot", "IRCoT", "IRCoT (multi-step)", " IRCoT", (("IRCoT (hybrid)", "hybrid"),),
           "ircot", ("retriever", "agent_k", "ircot_max_steps", "ircot_retriever", "ircot_max_passages",
                     "ircot_ranking", *PPR_SETTINGS, *QA_SETTINGS),
           needs_llm=True, multi_step=True, answers=True, peer=True, cli_note="IRCoT, LLM", uses_ppr=_ircot_on_ppr,
           retriever_shown=lambda retriever, settings: "PPR at every step" if _ircot_on_ppr(settings) else retriever,
           diagnosis="IRCoT", steps_setting="ircot_max_steps",
           typical_tokens=(4692, 45)),
)

BY_NAME: dict[str, Method] = {m.name: m for m in METHODS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


class UnknownMethod(ValueError):
    """A method name that is not registered; the message lists the ones that are."""


def get(name: str) -> Method:
    """The registered method called `name`."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownMethod(f"unknown method {name!r}; choose one of {', '.join(NAMES)}") from None


def find(name: str) -> Method | None:
    """The registered method called `name`, or None (a report or trace from elsewhere may name another)."""
    return BY_NAME.get(name)


def run_label(method: str, retriever: str) -> str:
    """"Hybrid GeAR", "BM25", "Dense + PPR": a run named by its retriever and its method's report name, as every
    evaluation and summary of runs names it (a method the registry does not know keeps its own name)."""
    known = find(method)
    name = known.report_name if known else f" {method}" if method else ""
    words = retriever.upper() if retriever == "bm25" else retriever.capitalize()
    return (words + name).strip()


def presets() -> dict[str, tuple[str, str]]:
    """label → (retriever, method name): the methods as the Compare and Evaluate pages offer them."""
    return {label: (retriever, m.name) for m in METHODS for label, retriever in m.presets}


def cli_help() -> str:
    """The --method option's help: every name, with its note."""
    names = [f"{m.name} ({m.cli_note})" if m.cli_note else m.name for m in METHODS]
    return ", ".join(names[:-1]) + " or " + names[-1]
