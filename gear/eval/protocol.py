"""Which run each figure of an evaluation comes from: one set of numbers per question, or the paper's.

`one-run` (the default): every method runs once per question at the largest cut-off; R@k for every k, the answer,
EM/F1, the diagnosis and the saved trace all read that one ranked list, so R@k never falls as k grows and the
funnel's "final@k" counts the very passages R@k counts.

`paper` (Table 1's protocol, App. B): a single-step method runs once per cut-off with k passages from its base
retriever, so R@k is the k-passage run's — a method's R@15 can fall below its R@10 (SyncGE's reader sees other
passages at each k). The answer, EM/F1, the diagnosis and the saved trace read the largest cut-off's run, and the
diagnosis counts at that cut-off, so its "final@k" is that run's R@k; tokens and LLM calls add up every run.
Multi-step methods (GeAR, IRCoT) run once per question either way: their reports are the same under both.

A report says its protocol in its "protocol" field; a report without it was made before the field existed, and every
such report followed the paper's protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gear import methods

ONE_RUN = "one-run"
PAPER = "paper"
PROTOCOLS = (ONE_RUN, PAPER)
DESCRIPTIONS = {
    ONE_RUN: "one run per question at the largest cut-off: every R@k, the answers and the diagnosis read one ranked "
             "list",
    PAPER: "the paper's Table 1 protocol: a single-step method runs once per cut-off with k passages (R@k is the "
           "k-passage run's); answers, diagnosis and traces read the largest cut-off's run",
}


def check(protocol: str) -> str:
    """The protocol, or one line naming the valid ones."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown evaluation protocol {protocol!r}: choose {' or '.join(PROTOCOLS)}")
    return protocol


def protocol_of(report: Mapping[str, Any]) -> str:
    """A saved report's protocol ("paper" for a report saved before reports said it: every one was made so)."""
    return str(report.get("protocol") or PAPER)


def runs_per_cutoff(method: str, protocol: str) -> bool:
    """Whether an evaluation with this method and protocol runs each cut-off apart (single-step under "paper")."""
    known = methods.find(method)  # a method this version does not know: single-step, as every report of its time
    return protocol == PAPER and not (known is not None and known.multi_step)


def per_cutoff(report: Mapping[str, Any]) -> bool:
    """Whether a saved report's R@k come from one run per cut-off (its figures then name their run)."""
    return runs_per_cutoff(str(report.get("method", "")), protocol_of(report))


def report_ks(report: Mapping[str, Any]) -> list[int]:
    return sorted(int(k) for k in report.get("recall", {}) if str(k).isdigit())


def traced_k(ks: Sequence[int]) -> int:
    """The cut-off of the run a question's answer, diagnosis and trace read: the largest (the only one, by default)."""
    return max(ks)


def diagnosis_k(ks: Sequence[int], per_cutoff_runs: bool) -> int:
    """The cut-off the diagnosis counts "found" at: the smallest of one run's (its R@k for the other cut-offs follow
    from the same ranks); the run's own cut-off when each cut-off is a run of its own, so that "final@k" is its R@k."""
    return traced_k(ks) if per_cutoff_runs else min(ks)


def source_note(report: Mapping[str, Any]) -> str:
    """Which run the report's figures come from, in one sentence for the CLI and the Evaluate page ("" for one run)."""
    ks = report_ks(report)
    if not per_cutoff(report) or len(ks) < 2:
        return ""
    top = traced_k(ks)
    each = ", ".join(f"R@{k}" for k in ks)
    return (f"Per-cut-off protocol (the paper's Table 1): {each} each come from a run of their own with k passages; "
            f"the answers, EM/F1, the diagnosis and the saved traces from the k={top} run; tokens and LLM calls add "
            f"up all {len(ks)} runs.")
