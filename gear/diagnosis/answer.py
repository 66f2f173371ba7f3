"""The answer side of a diagnosis: EM/F1 against the gold answers (SQuAD normalisation, best over aliases), whether a
gold answer occurs in the passages the QA step read and in the gold passages at all, and the reasoner's verdicts —
"answerable" with a wrong answer, rejected as ungrounded (small profile), the verdict that ended the run — whether a
wrong answer is right in substance (gear.diagnosis.matching: the one way answers are matched), and the made-up facts a
wrong answer came from (gear.diagnosis.categories orders them with the rest)."""

from __future__ import annotations

from gear.diagnosis.claims import ref, spo_value
from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.grounding import cover
from gear.diagnosis.matching import form_only, is_yes_no
from gear.diagnosis.model import READER, STEP_GIST, STEP_READ, STEP_THOUGHT, AnswerCheck, Cause
from gear.events import Answered, BaseRetrieved, PassagesAdded, ProximalTriples, Reasoned, ThoughtWritten
from gear.measures import exact_match, f1_score, normalize_answer


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
        if gold and check.em is not None and check.em < 1.0:
            check.form_only = form_only(answered.answer, gold)
    gold_ids = facts.gold
    if gold and gold_ids and not is_yes_no(gold):  # a comparison's yes or no is stated by no passage
        found = in_passages(facts, gold_ids, gold)
        all_known = all(facts.text_known(p) for p in gold_ids)
        check.in_gold_passages = True if found else (False if all_known and found is not None else None)
    for v in verdicts:
        if v.rejected:
            check.rejected.append(v.iteration)
        if v.answerable:
            if gold and not says(v.answer or check.answer or "", gold):
                check.answerable_wrong.append(v.iteration)
            check.stopped_at = v.iteration
    for t in thoughts:
        if t.final:
            if gold and not says(t.answer or check.answer or "", gold):
                check.answerable_wrong.append(t.iteration)
            check.stopped_at = t.iteration
    if verdicts or thoughts:
        check.max_iterations = int(facts.setting("ircot_max_steps" if ircot else "max_iterations", 0)) or None
    if check.stopped_early:
        check.notes.append(f"stopped at iteration {check.stopped_at} of {check.max_iterations} on "
                           f"{'a final thought' if ircot else 'an answerable verdict'}")
    return check


# -- the made-up facts a wrong answer came from ----------------------------------------------------------------
def wrong_answers(facts: TraceFacts, answer: AnswerCheck) -> list[tuple[str, str, str]]:
    """(how it was given, the answer, normalised) of every wrong answer the run gave: the final one, and every
    "answerable" verdict's or IRCoT final thought's (a sentence that says a gold answer is not wrong)."""
    given = [("the run answered", answer.answer or "")] + \
        [(f"the verdict of iteration {n} said", said) for n, said in verdict_answers(facts)]
    return [(how, said, normalize_answer(said)) for how, said in given
            if normalize_answer(said) and not says(said, answer.gold)]


def reader_fed(facts: TraceFacts, answer: AnswerCheck, before: int | None = None) -> Cause | None:
    """A triple the reader wrote from none of the passages it read has, as its subject or object, an answer the run
    gave (the final one, or an "answerable" verdict's): the reader 'completed' a hop and the run followed it.
    `before`: only triples written before that iteration (those the later iterations' queries were built on)."""
    wanted = wrong_answers(facts, answer)
    if not wanted:
        return None
    for e in facts.trace.of(ProximalTriples):
        if before is not None and e.iteration >= before:
            continue
        for a in facts.attributions(e):
            if a.supported or len(a.triple) < 3:
                continue
            ends = {normalize_answer(a.triple[0]), normalize_answer(a.triple[2])}
            hit = next(((how, said) for how, said, norm in wanted if norm in ends), None)
            if hit is not None:
                step = STEP_READ if e.role == "sync" else STEP_GIST
                return Cause(READER, (f"the {e.role} reader wrote {spo(a.triple)} (iteration {e.iteration}), a fact "
                                      f"none of the passages it read holds ({len(e.passage_ids)} read), and "
                                      f"{hit[0]} {hit[1]!r}",),
                             refs=(ref("wrote", step, e.iteration, None, spo_value(a.triple)),
                                   ref("unsupported", step, e.iteration, None, spo_value(a.triple))),
                             step=step)
    return None


def thought_fed(facts: TraceFacts, answer: AnswerCheck) -> Cause | None:
    """IRCoT's reader hallucination: a thought that was not the last (so the next retrieval searched with it) already
    states a wrong answer the run gave, no gold passage holds that answer, and the thought does not restate a passage
    it retrieved (not every content word of it is in one of them) — it 'completed' the question with a fact of its
    own making or joined to the question from another passage. An answer a gold passage holds (the bridge entity,
    typically) and a thought that restates a retrieved passage are the final thought's choice, left to the reasoner.
    Silent when the gold passages' texts are unknown."""
    gold_ids = facts.gold
    if not gold_ids or not all(facts.text_known(p) for p in gold_ids):
        return None
    last = max(facts.iterations, default=0)
    wanted = [(how, said, norm) for how, said, norm in wrong_answers(facts, answer)
              if in_passages(facts, gold_ids, [said]) is False]
    for t in facts.trace.of(ThoughtWritten):
        if t.final or t.iteration >= last:
            continue
        text = f" {normalize_answer(t.thought)} "
        hit = next(((how, said) for how, said, norm in wanted if f" {norm} " in text), None)
        if hit is not None and not restates(facts, t):
            return Cause(READER, (f"thought {t.iteration} ({t.thought!r}) already states {hit[1]!r}, which no gold "
                                  f"passage holds and no passage it retrieved says in those words; retrieval "
                                  f"{t.iteration + 1} searched with it and {hit[0]} {hit[1]!r}",),
                         refs=(ref("wrote", STEP_THOUGHT, t.iteration, None, hit[1]),), step=STEP_THOUGHT)
    return None


def restates(facts: TraceFacts, thought: ThoughtWritten) -> bool:
    """Every content word of the thought is in one passage retrieved up to its iteration: it says what that passage
    says (the sentence-level twin of a triple grounded in a passage read)."""
    retrieved = {p.id for e in facts.trace.of(BaseRetrieved) if e.iteration <= thought.iteration for p in e.passages}
    retrieved |= {p.id for e in facts.trace.of(PassagesAdded) if e.iteration <= thought.iteration for p in e.passages}
    return any(cover(thought.thought, facts.tokens.of(pid)) >= 1.0 for pid in retrieved if facts.text_known(pid))


def verdict_answers(facts: TraceFacts) -> list[tuple[int, str]]:
    """(iteration, answer) of every "answerable" verdict and IRCoT final thought that gave one."""
    return [(v.iteration, v.answer) for v in facts.trace.of(Reasoned) if v.answerable and v.answer] + \
        [(t.iteration, t.answer) for t in facts.trace.of(ThoughtWritten) if t.final and t.answer]


def verdict_answer(facts: TraceFacts, iteration: int) -> str:
    return next((said for n, said in verdict_answers(facts) if n == iteration), "")


def says(said: str, gold: list[str]) -> bool:
    """The verdict's answer is right: EM, or a gold answer inside it (the paper's reasoner answers in free text,
    often a sentence around the answer)."""
    if exact_match(said, gold) >= 1.0:
        return True
    text = f" {normalize_answer(said)} "
    return any(f" {g} " in text for g in (normalize_answer(a) for a in gold) if g)
