"""The answer side of a diagnosis: EM/F1 against the gold answers (SQuAD normalisation, best over aliases), whether a
gold answer occurs in the passages the QA step read and in the gold passages at all, and the reasoner's verdicts —
"answerable" with a wrong answer, rejected as ungrounded (small profile), the verdict that ended the run."""

from __future__ import annotations

from gear.eval.diagnosis.facts import TraceFacts
from gear.eval.diagnosis.model import AnswerCheck
from gear.eval.measures import exact_match, f1_score
from gear.trace import Answered, Reasoned, ThoughtWritten


def in_passages(facts: TraceFacts, pids: list[int], answers: list[str]) -> bool | None:
    """A gold answer string occurs in one of the passages; None when no passage text is known to look in."""
    known = [p for p in pids if facts.text_known(p)]
    if not answers or not known:
        return None
    return any(facts.tokens.contains(p, a) for p in known for a in answers)


def check_answer(facts: TraceFacts, ircot: bool) -> AnswerCheck | None:
    """None for a run that asks no LLM and gives no answer (base, NaiveGE, PPR without its filter)."""
    answered = facts.trace.first(Answered)
    verdicts = facts.trace.of(Reasoned)
    thoughts = facts.trace.of(ThoughtWritten)
    if answered is None and not verdicts and not thoughts:
        return None
    gold = facts.answers
    check = AnswerCheck(answered.answer if answered else None, gold)
    if answered is not None:
        check.qa_passage_ids = list(answered.passage_ids)
        if gold:
            check.em, check.f1 = exact_match(answered.answer, gold), f1_score(answered.answer, gold)
        else:
            check.em, check.f1 = answered.em, answered.f1
        check.in_qa_passages = in_passages(facts, check.qa_passage_ids, gold)
    gold_ids = facts.gold
    if gold and gold_ids:
        found = in_passages(facts, gold_ids, gold)
        all_known = all(facts.text_known(p) for p in gold_ids)
        check.in_gold_passages = True if found else (False if all_known and found is not None else None)
    for v in verdicts:
        if v.rejected:
            check.rejected.append(v.iteration)
        if v.answerable:
            said = v.answer or check.answer or ""
            if gold and exact_match(said, gold) < 1.0:
                check.answerable_wrong.append(v.iteration)
            check.stopped_at = v.iteration
    for t in thoughts:
        if t.final:
            if gold and exact_match(t.answer or check.answer or "", gold) < 1.0:
                check.answerable_wrong.append(t.iteration)
            check.stopped_at = t.iteration
    if verdicts or thoughts:
        check.max_iterations = int(facts.setting("ircot_max_steps" if ircot else "max_iterations", 0)) or None
    if check.stopped_early:
        check.notes.append(f"stopped at iteration {check.stopped_at} of {check.max_iterations} on "
                           f"{'a final thought' if ircot else 'an answerable verdict'}")
    return check
