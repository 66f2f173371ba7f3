"""The one place method families are registered: which stages each method has, in pipeline order, and the function
that marks a gold passage at each. A new method = a module with its marks function + one line here; a method not
registered is recognised by the events its trace holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gear.eval.diagnosis.expansion import (
    BASE_STAGES,
    GEAR_STAGES,
    NAIVE_STAGES,
    SYNC_STAGES,
    base_marks,
    gear_marks,
    naive_marks,
    sync_marks,
)
from gear.eval.diagnosis.facts import TraceFacts
from gear.eval.diagnosis.ircot import IRCOT_STAGES, retrieval_marks
from gear.eval.diagnosis.model import StageMark
from gear.eval.diagnosis.ppr import PPR_STAGES, ppr_marks
from gear.trace import InitialNodes, PassagesAdded, PassagesLinked, PPRRanked, ProximalTriples


@dataclass(frozen=True)
class Family:
    name: str
    stages: tuple[str, ...]  # before the final ranking, in pipeline order
    marks: Callable[[TraceFacts, int], list[StageMark]]
    graph: bool              # a graph step can reach passages the base list missed
    variant: tuple[str, ...] = ()  # settings that tell runs of the method apart in a summary


FAMILIES: dict[str, Family] = {
    "gear": Family("GeAR", GEAR_STAGES, gear_marks, True, ("prompts",)),
    "sync": Family("SyncGE", SYNC_STAGES, sync_marks, True, ("prompts",)),
    "naive": Family("NaiveGE", NAIVE_STAGES, naive_marks, True),
    "ppr": Family("PPR", PPR_STAGES, ppr_marks, True),
    "ircot": Family("IRCoT", IRCOT_STAGES, retrieval_marks, False, ("ircot_retriever",)),
    "none": Family("base", BASE_STAGES, base_marks, False),
}


def family_for(facts: TraceFacts) -> tuple[str, Family]:
    """The method's family, by name, or by the events of its trace for a method this module does not know."""
    if facts.method in FAMILIES:
        return facts.method, FAMILIES[facts.method]
    trace = facts.trace
    if trace.of(PassagesAdded):
        guess = "ircot"
    elif trace.of(PPRRanked):
        guess = "ppr"
    elif trace.of(PassagesLinked) or any(e.role == "gist" for e in trace.of(ProximalTriples)):
        guess = "gear"
    elif trace.of(ProximalTriples):
        guess = "sync"
    elif any(e.source == "naive" for e in trace.of(InitialNodes)):
        guess = "naive"
    else:
        guess = "none"
    return facts.method or guess, FAMILIES[guess]


def run_name(method: str, family: Family, facts: TraceFacts) -> str:
    """The method plus the settings that tell its runs apart, e.g. "gear (paper)", "ircot (ppr)"."""
    parts = [str(facts.settings[name]) for name in family.variant if facts.settings.get(name) is not None]
    if method == "ppr" and facts.settings.get("ppr_filter"):
        parts.append("filter")
    return f"{method} ({', '.join(parts)})" if parts else method
