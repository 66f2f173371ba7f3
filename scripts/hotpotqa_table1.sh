#!/usr/bin/env bash
# The paper's Table 1 on HotpotQA (docs/results.md, "Table 1 on HotpotQA"): the 100 bundled questions
# (assets/hotpotqa) over the index of their 994 passages with the triples the embedded model extracted (the bundled
# OpenIE file), MiniLM. Every row is one `gear eval`; reports go to docs/evals/hotpotqa_*.json.
#   single (no LLM, all 100 questions): BM25, dense, hybrid, each alone, + NaiveGE, + NaiveGE without diversity;
#     PPR (HippoRAG 2-style)
#   LLM rows (embedded model, paper prompts; every answer recorded into assets/llm_cache so CI replays them,
#   tests/integration/test_hotpotqa_replay.py), on every EVERY-th question, LIMIT of them (default all 100; on 2 cores
#   each row takes 40-55 min for 80 questions):
#     sync: hybrid + SyncGE
#     sync-nodiv: hybrid + SyncGE without diversity
#     sync-bases: BM25 + SyncGE and dense + SyncGE
#     gear: GeAR, at most 2 iterations (the paper's HotpotQA setting)
#     ircot: HippoRAG w/ IRCoT (IRCoT over PPR, at most 2 retrieval steps, as GeAR's 2 iterations)
#   and the single rows again on the same subset (subset), to compare like with like on a subset.
# Usage: scripts/hotpotqa_table1.sh [single|subset|gear|ircot|sync|sync-nodiv|sync-bases|all] [EVERY] [LIMIT]
#   (default: all 1 100: every row of docs/results.md). With EVERY and LIMIT a row runs on a subset (`gear 5 20`: every
#   5th question, 20 of them, ids 0, 5, ..., 95 in file order), and `subset 5 20` gives the single rows on the same 20.
# Run it on a quiet machine: timings under parallel jobs mean nothing (recall and answers do not depend on it).
source "$(dirname "$0")/eval_common.sh"
WHAT="${1:-all}"
EVERY="${2:-1}"
LIMIT="${3:-100}"
INDEX=data/indexes/hotpotqa
QA=assets/hotpotqa/hotpotqa_train100.json
OUT=docs/evals
K=2,5,10,15
demo_index hotpotqa
mkdir -p "$OUT"
# answers recorded before (in assets/llm_cache) are served at once, the rest asked live and recorded there: a row
# run again on more questions asks only the new ones (record mode would ask every one anew)
record=(env GEAR_LLM=auto GEAR_LLM_CACHE_DIR=assets/llm_cache)
one_recorder
sub=(--every "$EVERY" --limit "$LIMIT")
tag="hotpotqa_every${EVERY}_n${LIMIT}"
if [[ "$WHAT" == single || "$WHAT" == all ]]; then
  for r in bm25 dense hybrid; do
    $EVAL "$INDEX" "$QA" -r "$r" --k "$K" --json "$OUT/hotpotqa_${r}.json"
    $EVAL "$INDEX" "$QA" -r "$r" -m naive --k "$K" --json "$OUT/hotpotqa_${r}_naive.json"
    $EVAL "$INDEX" "$QA" -r "$r" -m naive --no-diversity --k "$K" --json "$OUT/hotpotqa_${r}_naive_nodiv.json"
  done
  $EVAL "$INDEX" "$QA" -r dense -m ppr --k "$K" --json "$OUT/hotpotqa_ppr.json"
fi
if [[ "$WHAT" == subset || "$WHAT" == all ]]; then
  $EVAL "$INDEX" "$QA" -r hybrid "${sub[@]}" --k "$K" --json "$OUT/${tag}_hybrid.json"
  $EVAL "$INDEX" "$QA" -r hybrid -m naive "${sub[@]}" --k "$K" --json "$OUT/${tag}_naive.json"
  for r in bm25 dense; do
    $EVAL "$INDEX" "$QA" -r "$r" "${sub[@]}" --k "$K" --json "$OUT/${tag}_${r}.json"
    $EVAL "$INDEX" "$QA" -r "$r" -m naive "${sub[@]}" --k "$K" --json "$OUT/${tag}_${r}_naive.json"
  done
  $EVAL "$INDEX" "$QA" -r dense -m ppr "${sub[@]}" --k "$K" --json "$OUT/${tag}_ppr.json"
fi
if [[ "$WHAT" == gear || "$WHAT" == all ]]; then
  "${record[@]}" $EVAL "$INDEX" "$QA" -r hybrid -m gear --prompts paper --max-iterations 2 "${sub[@]}" \
    --k "$K" --json "$OUT/${tag}_gear_paper.json"
fi
if [[ "$WHAT" == ircot || "$WHAT" == all ]]; then
  "${record[@]}" GEAR_IRCOT_RETRIEVER=ppr GEAR_IRCOT_MAX_STEPS=2 $EVAL "$INDEX" "$QA" -r hybrid -m ircot \
    --prompts paper "${sub[@]}" --k "$K" --json "$OUT/${tag}_ircot_ppr.json"
fi
# sync_row BASE NAME [options]: BASE + SyncGE, single-step, one run per cut-off (the paper's R@5 / 10 / 15)
if [[ "$WHAT" == sync || "$WHAT" == all ]]; then sync_row hybrid sync; fi
if [[ "$WHAT" == sync-nodiv || "$WHAT" == all ]]; then sync_row hybrid sync_nodiv --no-diversity; fi
if [[ "$WHAT" == sync-bases || "$WHAT" == all ]]; then sync_row bm25 bm25_sync; sync_row dense dense_sync; fi
