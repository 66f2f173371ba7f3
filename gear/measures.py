"""The measures of the paper (and HippoRAG): Recall@k over gold passages, SQuAD-normalised EM and F1 over aliases.

One place for them: evaluation reports, the run summary in every trace and the app's tables all call these.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Collection, Sequence


def recall_at(ranked: Sequence[int], gold: Sequence[int], k: int) -> float:
    """Fraction of gold passages among the top k (HippoRAG's definition)."""
    if not gold:
        return 0.0
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    return max((float(normalize_answer(prediction) == normalize_answer(a)) for a in answers), default=0.0)


def f1_score(prediction: str, answers: Sequence[str]) -> float:
    def f1(pred: str, gold: str) -> float:
        p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
        common = Counter(p) & Counter(g)
        same = sum(common.values())
        if same == 0:
            return 0.0
        precision, recall = same / len(p), same / len(g)
        return 2 * precision * recall / (precision + recall)

    return max((f1(prediction, a) for a in answers), default=0.0)


def recall_at_cutoffs(ranked: Sequence[int], gold: Collection[int],
                      ks: Sequence[int] = (5, 10, 15)) -> dict[str, float]:
    """R@k for several cut-offs as {"5": …}; empty when the gold passages are unknown."""
    if not gold:
        return {}
    return {str(k): recall_at(ranked, list(gold), k) for k in ks}
