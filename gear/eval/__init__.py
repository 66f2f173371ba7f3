"""Evaluation as the paper and HippoRAG define it: the measures (Recall@k, EM, F1; used by the agent and the trace
too, so this package's face imports nothing heavier) and the report over a QA set (gear.eval.report)."""

from gear.eval.measures import exact_match, f1_score, normalize_answer, recall_at, recall_at_cutoffs

__all__ = ["exact_match", "f1_score", "normalize_answer", "recall_at", "recall_at_cutoffs"]
