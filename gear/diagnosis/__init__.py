"""Where was the gold lost? Automatic error analysis of a run, as a pure function of its trace.

`diagnose(trace, k)` follows each gold passage of `RunStarted` through the stages its method has (per iteration:
base rank, read, tripleLink, beams and hop, expanded and fused ranks, gist read; then passageLink and the final rank),
names the stage it was lost at, checks the answer (EM/F1, the gold answer in the QA passages, the reasoner's verdicts)
and proposes an error category — the paper's six, the answer step, the rewriter, the final ranking — with its evidence
(each line with the steps it rests on) and a confidence. `summarise(diagnoses)` counts them per run, category, hop
type and stage (the funnel). No LLM; no index and nothing re-run unless the run's index is handed in as a probe.

Modules: model (records and the shared names), facts (what a trace shows), grounding (which passage a reader's triple
came from), matching (how answers are matched), expansion / ppr / ircot (the stages of each method family), registry
(the one place families are registered), answer, hops (which hop each gold passage serves), attribution (the step
responsible for a lost passage), probe (what the index can tell, and the re-runs), stage_rules (one rule per stage a
passage is lost at, in one table) and bridge (the path in the text the graph did not take), claims (what an evidence
line rests on), categories (the proposal), invariant (a verdict agrees with its table), evidence (words for marks),
diagnose, summary; gold_marks (gold passages a person marks on a run), gold_texts (their texts from a QA set). The
rules in words: docs/diagnosis.md.
"""

from gear.diagnosis.diagnose import DEFAULT_K, diagnose
from gear.diagnosis.evidence import cell, describe
from gear.diagnosis.model import (
    CATEGORIES,
    CATEGORY_LABELS,
    FOUND,
    RUN_LEVEL,
    STAGES,
    STEPS,
    AnswerCheck,
    Diagnosis,
    Family,
    GoldPassage,
    Ref,
    StageMark,
    hop_type,
    stage_label,
)
from gear.diagnosis.probe import Probe
from gear.diagnosis.registry import FAMILIES
from gear.diagnosis.summary import RunSummary, Summary, summarise

__all__ = [
    "CATEGORIES",
    "CATEGORY_LABELS",
    "DEFAULT_K",
    "FAMILIES",
    "FOUND",
    "RUN_LEVEL",
    "STAGES",
    "STEPS",
    "AnswerCheck",
    "Diagnosis",
    "Family",
    "GoldPassage",
    "Probe",
    "Ref",
    "RunSummary",
    "StageMark",
    "Summary",
    "cell",
    "describe",
    "diagnose",
    "hop_type",
    "stage_label",
    "summarise",
]
