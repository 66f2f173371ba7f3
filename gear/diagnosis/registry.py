"""Which family diagnoses which method: read from the method registry (gear.methods), where each Method names its
family, so adding a method stays one runner module, one family (or an existing one) and one registration line. A
method not registered is recognised by the events its trace holds."""

from __future__ import annotations

from gear import methods
from gear.diagnosis.expansion import BASE_ONLY, GEAR, NAIVE, SYNC
from gear.diagnosis.facts import TraceFacts
from gear.diagnosis.ircot import IRCOT
from gear.diagnosis.model import Family
from gear.diagnosis.ppr import PPR
from gear.events import InitialNodes, PassagesAdded, PassagesLinked, PPRRanked, ProximalTriples

#: family name → Family: what a Method's `diagnosis` names
BY_NAME: dict[str, Family] = {f.name: f for f in (BASE_ONLY, NAIVE, SYNC, GEAR, PPR, IRCOT)}


def _family(method: methods.Method) -> Family:
    if method.diagnosis not in BY_NAME:
        raise LookupError(f"method {method.name!r}: no diagnosis family {method.diagnosis!r} "
                          f"(there are {', '.join(BY_NAME)})")
    return BY_NAME[method.diagnosis]


#: method name -> its family, as the method registry says
FAMILIES: dict[str, Family] = {m.name: _family(m) for m in methods.METHODS if m.diagnosis}


def _guess(facts: TraceFacts) -> Family:
    """The family whose events a trace of an unregistered method shows."""
    trace = facts.trace
    if trace.of(PassagesAdded):
        return IRCOT
    if trace.of(PPRRanked):
        return PPR
    if trace.of(PassagesLinked) or any(e.role == "gist" for e in trace.of(ProximalTriples)):
        return GEAR
    if trace.of(ProximalTriples):
        return SYNC
    if any(e.source == "naive" for e in trace.of(InitialNodes)):
        return NAIVE
    return BASE_ONLY


def family_for(facts: TraceFacts) -> tuple[str, Family]:
    """The method's family, by name, or by the events of its trace for a method the registry does not know."""
    if facts.method in FAMILIES:
        return facts.method, FAMILIES[facts.method]
    family = _guess(facts)
    named = next((name for name, f in FAMILIES.items() if f is family), family.name)
    return facts.method or named, family


def run_name(method: str, family: Family, facts: TraceFacts) -> str:
    """The method plus the settings that tell its runs apart, e.g. "gear (paper)", "ircot (ppr)"."""
    parts = [str(facts.settings[name]) for name in family.variant if facts.settings.get(name) is not None]
    if family is PPR and facts.settings.get("ppr_filter"):
        parts.append("filter")
    return f"{method} ({', '.join(parts)})" if parts else method
