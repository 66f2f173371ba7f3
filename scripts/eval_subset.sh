#!/usr/bin/env bash
# The agent's numbers on a stated subset of MuSiQue dev50 with the embedded model (docs/results.md, "Agent on the
# embedded model"): NaiveGE, GeAR with the paper's prompts, GeAR with the small-model profile, and the peers (PPR without
# and with its LLM recognition filter, IRCoT with PPR as its retriever: "HippoRAG w/ IRCoT", and plain IRCoT over the
# hybrid retriever; docs/peers.md), on the same questions; and for docs/results.md's three-dataset table the hybrid
# retriever alone and hybrid + SyncGE (added 2026-12-02, after the others were recorded).
# Every LLM answer is recorded into assets/llm_cache (record mode: always live, so the times are the model's), so CI
# replays these runs and pins their numbers (tests/integration/test_agent_replay.py).
# Usage: scripts/eval_subset.sh [EVERY] [LIMIT]   (default: every 2nd question of musique_dev50.json from the first,
# 20 of them: ids 0, 2, …, 38 in file order — 17 two-hop and 3 three-hop questions)
# Run it on a quiet machine: timings under parallel jobs mean nothing.
source "$(dirname "$0")/eval_common.sh"
EVERY="${1:-2}"
LIMIT="${2:-20}"
INDEX=data/indexes/musique
QA=assets/musique/musique_dev50.json
OUT=docs/evals
demo_index musique
mkdir -p "$OUT"
tag="dev50_every${EVERY}_n${LIMIT}"
# sync_row's mode: auto, as published (its reads are partly GeAR's; record mode would ask them again and may overwrite
# GeAR's recordings with other text: docs/results.md, "dev50 subset")
record=(env GEAR_LLM=auto GEAR_LLM_CACHE_DIR=assets/llm_cache)
one_recorder
sub=(--every "$EVERY" --limit "$LIMIT")
$EVAL "$INDEX" "$QA" -r hybrid "${sub[@]}" --k 2,5,10,15 --json "$OUT/${tag}_hybrid.json"
$EVAL "$INDEX" "$QA" -r hybrid -m naive --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_naive.json"
for profile in small paper; do
  GEAR_LLM=record GEAR_LLM_CACHE_DIR=assets/llm_cache $EVAL "$INDEX" "$QA" -r hybrid -m gear --prompts "$profile" \
    --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_gear_${profile}.json"
done
$EVAL "$INDEX" "$QA" -r dense -m ppr --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_ppr.json"
GEAR_LLM=record GEAR_LLM_CACHE_DIR=assets/llm_cache GEAR_PPR_FILTER=true $EVAL "$INDEX" "$QA" -r dense -m ppr \
  --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_ppr_filter.json"
GEAR_LLM=record GEAR_LLM_CACHE_DIR=assets/llm_cache GEAR_IRCOT_RETRIEVER=ppr $EVAL "$INDEX" "$QA" -r hybrid -m ircot \
  --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_ircot_ppr.json"
GEAR_LLM=record GEAR_LLM_CACHE_DIR=assets/llm_cache GEAR_IRCOT_RETRIEVER=base $EVAL "$INDEX" "$QA" -r hybrid -m ircot \
  --every "$EVERY" --limit "$LIMIT" --json "$OUT/${tag}_ircot_base.json"
sync_row hybrid sync
