"""The claims an evidence line may rest on, each one a question the trace's events answer again (a `Ref`).

Every sentence of evidence says something about a step of the run; the line carries refs saying which step, which
iteration and what of it, so the app can link the line to the step and a test can ask the events again
(tests/unit/test_diagnosis_claims.py re-derives every ref of every diagnosis it generates). A few words are claims
in themselves: a line says them only with the ref that shows them (`PHRASES`).

| claim | what the events show |
| --- | --- |
| listed | the step's list in that iteration holds the passage, at rank `value` |
| unlisted | no list of the step, in any iteration, holds the passage |
| ranked | the final ranking holds the passage at rank `value` ("" for not at all) |
| read | that read (sync `read`, `gist`) had the passage in front of it |
| wrote | that read wrote the triple `value` ("s | p | o"); a thought: its text holds `value` |
| unsupported | that triple is grounded in none of the passages that read had (gear.diagnosis.grounding) |
| drew_nothing | no triple that read wrote names `value` (every word of it in one end) |
| drew_none_from | that read had the passage in front of it and no triple it wrote is grounded in the passage |
| names | the step's text in that iteration (its query; a written triple or thought) names `value` |
| not_named | the step's text in that iteration does not name `value` |
| repeats | the rewritten query of that iteration asks no word the question and the earlier queries did not |
| linked | tripleLink in that iteration linked the triple `value` ("s | p | o => id") |
| beam_missed | no kept beam of that iteration holds a triple of the passage |
| reached | the step (kept beams, tripleLink, PPR's kept seed facts) in that iteration holds the index triple `value` |
| gist_holds | the gist memory after that iteration holds a triple naming `value` |
| stopped | that iteration's verdict (IRCoT: thought) said answerable (final) and the run asked no more |
| answered | the QA step answered `value` |
| qa_holds | the passages the QA step read include the passage, which holds the answer `value` |
| found | the passage is within the final top `value` |
| gold_lacks | no gold passage's text holds a gold answer (`value` the first): no retrieval could succeed |
| rerun | a counterfactual re-run over the index (not a fact of the trace: said as "re-run") |
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.diagnosis.model import RUN_LEVEL, Ref

CLAIMS = ("listed", "unlisted", "ranked", "read", "wrote", "unsupported", "drew_nothing", "drew_none_from", "names",
          "not_named", "repeats", "linked", "beam_missed", "reached", "gist_holds", "stopped", "answered", "qa_holds",
          "found", "gold_lacks", "rerun")

#: words that are claims themselves: a line says them only with a ref of one of those claims
PHRASES = {"steered by": ("names",), "drew no triple": ("drew_nothing", "drew_none_from"),
           "asked nothing new": ("repeats",), "repeats the question": ("repeats",),
           "repeated the question": ("repeats",), "re-run": ("rerun",),
           "none of the passages it read holds": ("unsupported",), "still missing": ("stopped",)}


#: a ref's step in a person's words (the CLI's and the app's pointers to the step)
STEP_WORDS = {"base": "base list", "retrieval": "retrieval", "read": "sync read", "link": "tripleLink",
              "beam": "beam search", "expanded": "expanded list", "fused": "fused list", "gist": "gist read",
              "rewriter": "rewriter", "reasoner": "reasoner", "passagelink": "passageLink", "ranking": "final ranking",
              "thought": "thought", "seed": "PPR's seeds", "walk": "PPR's walk", "answer": "QA step",
              "question": "the question", "dataset": "the gold", "extraction": "the index's triples"}


def where(r: Ref) -> str:
    """Where a ref points, in words: "base list (iteration 2)", "final ranking", "re-run of the beam search"."""
    words = STEP_WORDS.get(r.step, r.step)
    if r.claim == "rerun":
        return f"re-run of the {words}"
    return f"{words} (iteration {r.iteration})" if r.iteration != RUN_LEVEL else words


def spo_value(triple: Sequence[str]) -> str:
    """A triple as a ref's value: "s | p | o"."""
    return " | ".join(str(x) for x in triple)


def ref(claim: str, step: str, iteration: int = RUN_LEVEL, passage: int | None = None, value: object = "") -> Ref:
    if claim not in CLAIMS:
        raise ValueError(f"unknown claim {claim!r}")
    return Ref(claim, step, iteration, passage, str(value))
